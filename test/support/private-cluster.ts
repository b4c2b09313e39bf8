/**
 * A private Postgres cluster that a test may crash (SPEC S7, S8, S11): created with `initdb`
 * in a temp folder, listening on a free loopback port from 55433 up, run as the `postgres`
 * user (`runuser`) when the tests run as root, stopped with `pg_ctl stop -m immediate` (no
 * shutdown checkpoint, no WAL flush: what a power cut leaves of the server's memory), and
 * started again. The machine's shared cluster on 5432 is never touched.
 *
 * Needs the server binaries (/usr/lib/postgresql/<version>/bin; `.ci/crash-cluster.sh`
 * installs them in CI). Without them the tests skip and say why; under CI=true they must run.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PrivateClusterAvailability {
  /** Where initdb and pg_ctl live; undefined when they cannot be found. */
  bin: string | undefined;
  skipReason: string | undefined;
}

export function privateClusterAvailability(): PrivateClusterAvailability {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const reason =
    versions.length === 0
      ? `no Postgres server binaries under ${root} (run .ci/crash-cluster.sh)`
      : process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser')
        ? 'running as root without runuser to start Postgres as a non-root user'
        : undefined;
  if (reason && process.env.CI === 'true') {
    throw new Error(`CI=true requires a private Postgres cluster, but: ${reason}`);
  }
  if (reason) console.warn(`[test/support/private-cluster] skipped: ${reason}`);
  return {
    bin: reason ? undefined : join(root, versions[0]!, 'bin'),
    skipReason: reason && `skipped: ${reason}`,
  };
}

export interface PrivateCluster {
  url: string;
  port: number;
  /** Kills the server as a crash would: `pg_ctl stop -m immediate`. */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  destroy(): Promise<void>;
}

export async function createPrivateCluster(bin: string): Promise<PrivateCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-crash-cluster-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const [uid, gid] = await Promise.all([
      run('id', ['-u', 'postgres']).then((r) => Number(r.stdout)),
      run('id', ['-g', 'postgres']).then((r) => Number(r.stdout)),
    ]);
    chownSync(dir, uid, gid);
  }
  /** Runs a server binary as the `postgres` user (Postgres refuses to run as root). */
  const pgRun = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args])
      : run(join(bin, tool), args);
  const port = await freePort(55433);
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // Durable commits, as in production: what a crash may lose is what the store allows.
    '-c fsync=on',
    '-c synchronous_commit=on',
  ].join(' ');
  const start = async () => {
    await pgRun('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    crash: async () => {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    start,
    destroy: async () => {
      await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The first port from `from` that nothing listens on (loopback). */
async function freePort(from: number): Promise<number> {
  for (let port = from; port < from + 50; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${from}-${from + 49}`);
}
