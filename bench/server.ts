/**
 * The HTTP bench server: node:http + GraphQL Yoga + the library on the real Postgres through
 * a node-postgres Pool, in `BENCH_WORKERS` processes sharing one port through node:cluster
 * (the primary only accepts and hands out connections). Each worker serves the guarded
 * server at /graphql and the same server without the plugin at /plain, so guarded and
 * unguarded load runs alternate against the same processes.
 *
 * Two more servers without the plugin send a design's statements straight from the resolver
 * (bench/db/design-statements.ts), each call with a fresh key of its own: /design-lock (the
 * one-transaction claim as the store sends it on a node-postgres Pool, three round trips) and
 * /design-claim-inside (the claim row inside the business transaction, three round trips).
 * What they serve is the most any guarded server on that design could.
 *
 * Started by bench/cases/http.ts as `node --import tsx bench/server.ts`; the tables (and their
 * functions) must exist: the runner creates and drops them. Prints `ready` once
 * every worker listens.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { yogaApps } from './apps/yoga.js';
import { designStatements } from './db/design-statements.js';
import { nodePgDb, postgresBenchDb } from './db/postgres.js';
import type { BenchDb } from './db/types.js';
import { freshKey } from './keys.js';

const port = Number(process.env.BENCH_PORT);
const workers = Number(process.env.BENCH_WORKERS ?? 1);
const tables = {
  records: process.env.BENCH_RECORDS_TABLE ?? '',
  payments: process.env.BENCH_PAYMENTS_TABLE ?? '',
};
/** Connections per worker: a guarded call holds two at its peak (claim, then transaction). */
const POOL_SIZE = 10;

if (cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === workers) console.log('ready');
  });
  cluster.on('exit', (_worker, code, signal) => {
    if (!stopping) {
      console.error(`bench server: a worker died (${code ?? signal})`);
      process.exit(1);
    }
  });
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
    process.exit(0);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
} else {
  const { pool, db } = nodePgDb(POOL_SIZE);
  const designs = designStatements(pool, tables);
  const bench = postgresBenchDb(pool, db, tables, () => pool.end(), designs);
  const { plain, guarded } = yogaApps(bench, { plain: '/plain', guarded: '/graphql' });
  // The plain server, its business write replaced by a design's statements.
  const designServer = (path: string, design: (key: string) => Promise<unknown>) => {
    const db: BenchDb = {
      ...(bench as BenchDb),
      insert: async () => {
        await design(freshKey('http-design'));
        return 0;
      },
    };
    return yogaApps(db, { plain: path, guarded: path }).plain;
  };
  const lock = designServer('/design-lock', designs.oneTransactionMerged);
  const claimInside = designServer('/design-claim-inside', designs.claimInTransactionMerged);
  createServer((req, res) => {
    if (req.url?.startsWith('/plain')) plain(req, res);
    else if (req.url?.startsWith('/design-lock')) lock(req, res);
    else if (req.url?.startsWith('/design-claim-inside')) claimInside(req, res);
    else guarded(req, res);
  }).listen(port, '127.0.0.1');
}
