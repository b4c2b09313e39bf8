/**
 * Over loopback HTTP on Postgres: 64 connections against the bench server (bench/server.ts)
 * in 1 and then 2 processes. Per process count, the variants (unguarded, guarded with
 * distinct keys, guarded with 10% duplicate keys, and the two design servers) alternate in
 * rounds, as the in-process cases do, after a discarded warm-up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { benchTables, createTables, dropTables, nodePgDb } from '../db/postgres.js';
import { type LoadSamples, type LoadVariant, runLoad } from '../load.js';
import { summarize } from '../measure.js';

export interface HttpOptions {
  processes: readonly number[];
  connections: number;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
}

export interface HttpResult {
  id: string;
  processes: number;
  variant: LoadVariant;
  requestsPerSecond: number;
  medianMs: number;
  p99Ms: number;
  responses: number;
  statuses: Record<string, number>;
  errors: number;
}

const VARIANTS: readonly LoadVariant[] = [
  'unguarded',
  'distinct',
  'duplicates',
  'design-lock',
  'design-claim-inside',
];
const SERVER = fileURLToPath(new URL('../server.ts', import.meta.url));

export async function httpCases(options: HttpOptions): Promise<HttpResult[]> {
  const { db, pool } = nodePgDb(2);
  const tables = benchTables('bench_http');
  await createTables(db, tables);
  const results: HttpResult[] = [];
  try {
    for (const processes of options.processes) {
      const port = await freePort();
      const server = await startServer(port, processes, tables);
      try {
        const url = `http://127.0.0.1:${port}`;
        const load = { connections: options.connections, seconds: options.warmupSeconds };
        for (const variant of VARIANTS) await runLoad(url, variant, load);
        const runs = new Map<LoadVariant, LoadSamples[]>(VARIANTS.map((v) => [v, []]));
        for (let round = 0; round < options.rounds; round++) {
          for (let i = 0; i < VARIANTS.length; i++) {
            const variant = VARIANTS[(i + round) % VARIANTS.length]!;
            runs.get(variant)!.push(
              await runLoad(url, variant, {
                connections: options.connections,
                seconds: options.seconds,
              }),
            );
          }
        }
        for (const [variant, samples] of runs) results.push(combine(processes, variant, samples));
      } finally {
        await stopServer(server);
      }
    }
  } finally {
    await dropTables(db, tables);
    await pool.end();
  }
  return results;
}

function combine(processes: number, variant: LoadVariant, runs: LoadSamples[]): HttpResult {
  const latencies = runs.flatMap((run) => run.latencies);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const run of runs) {
    for (const [status, count] of Object.entries(run.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
    }
  }
  // summarize() works on any unit; these are milliseconds.
  const stats = summarize(latencies);
  return {
    id: `http.${processes}p.${variant}`,
    processes,
    variant,
    requestsPerSecond: latencies.length / seconds,
    medianMs: stats.median,
    p99Ms: stats.p99,
    responses: latencies.length,
    statuses,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function startServer(
  port: number,
  workers: number,
  tables: { records: string; payments: string },
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    env: {
      ...process.env,
      BENCH_PORT: String(port),
      BENCH_WORKERS: String(workers),
      BENCH_RECORDS_TABLE: tables.records,
      BENCH_PAYMENTS_TABLE: tables.payments,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bench server did not start in 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`bench server exited early (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
