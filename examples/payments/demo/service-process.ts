/**
 * Starts the payments service (server.ts) as a child process on a free port and reads the
 * port from the line it prints. The demo and the end-to-end tests both use it, so both
 * depend on the printed line as the contract says it: `listening on http://<host>:<port>`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../server.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LISTENING = /listening on http:\/\/[^\s/]+:(\d+)/;

export interface ServiceProcess {
  /** `http://127.0.0.1:<port>`: the service listens on every interface. */
  url: string;
  /** The line the service printed when it started listening. */
  banner: string;
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM (a graceful shutdown), SIGKILL if it is not gone within `graceMs`. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface StartOptions {
  /** Added to this process's environment. PORT defaults to 0 (a free port). */
  env?: Record<string, string | undefined>;
  /** @default 45_000 (tsx compiles on first start; a busy machine takes a while) */
  startTimeoutMs?: number;
}

export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  // `node --import tsx` rather than `npx tsx`: signals reach the server itself, not a wrapper.
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `the service did not start within ${options.startTimeoutMs ?? 45_000} ms:\n${output}`,
        ),
      );
    }, options.startTimeoutMs ?? 45_000);
    const check = () => {
      const line = output.split('\n').find((l) => LISTENING.test(l));
      if (line === undefined) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve(line);
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with code ${code} before listening:\n${output}`));
    });
  });
  const port = LISTENING.exec(banner)?.[1];
  return {
    url: `http://127.0.0.1:${port}`,
    banner,
    output: () => output,
    stop: (graceMs = 5000) => stop(child, exited, graceMs),
  };
}

async function stop(
  child: ChildProcess,
  exited: Promise<number | null>,
  graceMs: number,
): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}
