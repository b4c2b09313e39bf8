/**
 * The round trips and statements of each call a user makes, per store and driver (count.ts
 * says how they are counted): the unguarded mutation (the business insert in a Drizzle
 * transaction of its own), a fresh guarded call, a replay, and a duplicate while the first
 * call runs (409) from this process and, on Postgres over TCP, from another (a second client
 * with its own connections, as another process has). Through `guard.run`: the adapters add
 * no statement of their own. Every call runs once before it is counted (postgres.js
 * describes a statement the first time a connection prepares it).
 */
import { PGlite } from '@electric-sql/pglite';
import { drizzle as nodePg } from 'drizzle-orm/node-postgres';
import { drizzle as pglite } from 'drizzle-orm/pglite';
import { drizzle as postgresJs } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import { createGuard, IdempotencyError } from '../src/index.js';
import type { AnyPgDatabase } from '../src/postgres/index.js';
import {
  type Count,
  type Counter,
  countCall,
  pgliteCounter,
  sqliteCounter,
  wireCounter,
} from './count.js';
import {
  type BenchDb,
  createTables,
  DATABASE_URL,
  dropTables,
  openSqliteBench,
  postgresBench,
  runTables,
} from './db.js';
import { freshKey } from './keys.js';

export type Driver = 'better-sqlite3' | 'node-postgres' | 'postgres.js' | 'PGlite';
export const DRIVERS: readonly Driver[] = [
  'better-sqlite3',
  'node-postgres',
  'postgres.js',
  'PGlite',
];

export interface CountRow {
  store: 'sqlite' | 'postgres';
  driver: Driver;
  unguarded: Count;
  fresh: Count;
  replay: Count;
  /** A duplicate while the first call runs, from the same process: 409. */
  inFlight: Count;
  /** The same from another process (another client of the same server), where there is one. */
  inFlightElsewhere?: Count;
}

/** A database to count on, and a second client to the same one where there can be. */
interface Counted {
  bench: BenchDb;
  other?: BenchDb;
  counter: Counter;
  close(): Promise<void>;
}

export async function countDriver(driver: Driver, url = DATABASE_URL): Promise<CountRow> {
  const counted = await open(driver, url);
  try {
    await countCalls(driver, counted); // a first pass, so that each call is counted warm
    return await countCalls(driver, counted);
  } finally {
    await counted.close();
  }
}

async function countCalls(driver: Driver, { bench, other, counter }: Counted): Promise<CountRow> {
  const call = (db: BenchDb, key: string, before = async () => {}) =>
    createGuard({ store: db.store }).run({
      scope: 'bench',
      key,
      fingerprint: 'pay 42',
      operation: 'pay',
      work: async (tx) => {
        await before();
        return db.insertTx(tx, 42);
      },
    });
  const key = freshKey('count');
  const unguarded = await countCall(counter, () => bench.insertInTransaction(42));
  const fresh = await countCall(counter, () => call(bench, key));
  const replay = await countCall(counter, async () => {
    if (!(await call(bench, key)).replayed) throw new Error('counts: the replay ran afresh');
  });
  // The first call holds its key, its work waiting, while the duplicate is counted.
  let started!: () => void;
  let finish!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const held = new Promise<void>((resolve) => (finish = resolve));
  const inFlightKey = freshKey('count-in-flight');
  const first = call(bench, inFlightKey, async () => {
    started();
    await held;
  });
  await running;
  const duplicate = (db: BenchDb) => () =>
    call(db, inFlightKey).then(
      () => Promise.reject(new Error('counts: the duplicate ran')),
      (error: unknown) => {
        if (!(error instanceof IdempotencyError) || error.status !== 409) throw error;
      },
    );
  try {
    const inFlight = await countCall(counter, duplicate(bench));
    const elsewhere = other && (await countCall(counter, duplicate(other)));
    const store = driver === 'better-sqlite3' ? 'sqlite' : 'postgres';
    const row = { store, driver, unguarded, fresh, replay, inFlight } as const;
    return elsewhere ? { ...row, inFlightElsewhere: elsewhere } : row;
  } finally {
    finish();
    await first;
  }
}

async function open(driver: Driver, url: string): Promise<Counted> {
  if (driver === 'better-sqlite3') {
    const bench = openSqliteBench(':memory:');
    const counter = sqliteCounter(bench.db.$client);
    return { bench, counter, close: () => counter.close().then(bench.close) };
  }
  if (driver === 'PGlite') {
    const client = new PGlite();
    const db = pglite({ client });
    const tables = runTables('bench_count');
    await createTables(db, tables);
    const counter = pgliteCounter(client);
    const bench = postgresBench(db, tables, () => client.close());
    return { bench, counter, close: () => counter.close().then(bench.close) };
  }
  const counter = await wireCounter(url);
  const tables = runTables('bench_count');
  const connect = (): { db: AnyPgDatabase; end: () => Promise<unknown> } => {
    if (driver === 'node-postgres') {
      const pool = new pg.Pool({ connectionString: counter.url, max: 2 });
      return { db: nodePg({ client: pool }), end: () => pool.end() };
    }
    const sql = postgres(counter.url, { max: 2, onnotice: () => {} });
    return { db: postgresJs({ client: sql }), end: () => sql.end() };
  };
  const [one, two] = [connect(), connect()];
  await createTables(one.db, tables);
  return {
    bench: postgresBench(one.db, tables, async () => {}),
    other: postgresBench(two.db, tables, async () => {}),
    counter,
    close: async () => {
      await dropTables(one.db, tables);
      await Promise.all([one.end(), two.end()]);
      await counter.close();
    },
  };
}
