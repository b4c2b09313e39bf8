/**
 * Starts server-main.ts as a child process (`node --import tsx`), waits for its READY line,
 * and lets a test wait for a FAULT line and SIGKILL it exactly there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerTarget } from './backend.js';
import type { FaultPoint } from './instrument.js';

const MAIN = fileURLToPath(new URL('./server-main.ts', import.meta.url));

export interface ServerEnv {
  STORE: 'sqlite' | 'postgres';
  LOCATION: string;
  TABLE: string;
  DELAY_MS?: number;
  FAULT_POINT?: FaultPoint;
  /** 1: also serve /graphql. */
  GRAPHQL?: 1;
  /** Postgres pool size per process. @default 10 */
  POOL_SIZE?: number;
  /** The Postgres driver. @default 'node-postgres' */
  PG_DRIVER?: 'node-postgres' | 'postgres.js';
  /** The Postgres sessions' default isolation. @default the server's */
  PG_DEFAULT_ISOLATION?: 'serializable';
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** Resolves with the first stdout line starting with `prefix`. */
  waitForLine(prefix: string, timeoutMs?: number): Promise<string>;
  /** SIGKILL: no cleanup, no graceful close; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

/** A server process's settings for a Postgres target (none for SQLite). */
export function serverTargetEnv(
  target: ServerTarget | undefined,
): Pick<ServerEnv, 'PG_DRIVER' | 'PG_DEFAULT_ISOLATION'> {
  if (!target) return {};
  return {
    PG_DRIVER: target.driver,
    ...(target.defaultIsolation ? { PG_DEFAULT_ISOLATION: target.defaultIsolation } : {}),
  };
}

export async function startServer(env: ServerEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...stringify(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { prefix: string; resolve(line: string): void }[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((w) => line.startsWith(w.prefix))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
      newline = buffered.indexOf('\n');
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const waitForLine = (prefix: string, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((line) => line.startsWith(prefix));
      if (seen) return resolve(seen);
      const timer = setTimeout(
        () =>
          reject(new Error(`no "${prefix}" line from the server in ${timeoutMs} ms:\n${stderr}`)),
        timeoutMs,
      );
      void exited.then(() =>
        reject(new Error(`server exited before "${prefix}" (code ${child.exitCode}):\n${stderr}`)),
      );
      waiters.push({
        prefix,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });

  try {
    const ready = await waitForLine('READY ', 30_000);
    return {
      url: `http://127.0.0.1:${ready.slice('READY '.length)}`,
      pid: child.pid!,
      waitForLine,
      kill: () => signal(child, 'SIGKILL', exited),
      stop: () => signal(child, 'SIGTERM', exited),
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function signal(child: ChildProcess, name: NodeJS.Signals, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(name);
  return exited;
}

function stringify(env: ServerEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)]),
  );
}
