/**
 * The Postgres benchmark database: the real server through a node-postgres Pool, with tables
 * of their own per run (so that concurrent test suites and earlier runs never share rows),
 * dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { functionNames } from '../../src/postgres/functions.js';
import { migratePostgres, type PgTransactionOf, postgresStore } from '../../src/postgres/index.js';
import { designStatements } from './design-statements.js';
import { paymentsTable } from './postgres-payments.js';
import type { BenchDb } from './types.js';

export const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A records table name for one run, plus its business table. */
export function benchTables(prefix = 'bench') {
  const records = `${prefix}_${randomBytes(5).toString('hex')}`;
  return { records, payments: `${records}_payments` };
}

/** Creates the records table (shipped migration) and the business table. */
export async function createTables(db: NodePgDb, tables: ReturnType<typeof benchTables>) {
  await migratePostgres(db, { table: tables.records });
  await db.execute(
    sql.raw(
      `create table if not exists ${tables.payments} (id serial primary key, amount integer not null, note text)`,
    ),
  );
}

export async function dropTables(db: NodePgDb, tables: ReturnType<typeof benchTables>) {
  for (const name of [tables.payments, `${tables.records}_migrations`, tables.records]) {
    await db.execute(sql.raw(`drop table if exists ${name}`));
  }
  // The store's functions (migration 0001_functions) outlive their table.
  for (const name of Object.values(functionNames(tables.records))) {
    await db.execute(sql.raw(`drop function if exists "${name}"`));
  }
}

export function nodePgDb(max: number) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max });
  // An idle client's error (a server restart) must not crash the benchmark.
  pool.on('error', () => {});
  return { pool, db: drizzle({ client: pool }) };
}

export type NodePgDb = ReturnType<typeof nodePgDb>['db'];

/** A run of its own: fresh tables, dropped again by `close`. */
export async function openPostgresBench(): Promise<BenchDb<PgTransactionOf<NodePgDb>>> {
  // Sequential calls use one connection at a time, the guarded path two (claim, then the
  // transaction); a few more cover the peer's and the round-trip probes.
  const { pool, db } = nodePgDb(4);
  const tables = benchTables();
  await createTables(db, tables);
  return postgresBenchDb(pool, db, tables, async () => {
    await dropTables(db, tables);
    await pool.end();
  });
}

/** The cases' view of tables that exist already (the HTTP bench server's workers use this). */
export function postgresBenchDb(
  pool: pg.Pool,
  db: NodePgDb,
  tables: ReturnType<typeof benchTables>,
  close: () => Promise<void>,
  /** The designs' statements on the same pool and tables, for `freshDesign`: pass your own if you have them. */
  designs = designStatements(pool, tables),
): BenchDb<PgTransactionOf<NodePgDb>> {
  type Tx = PgTransactionOf<NodePgDb>;
  const payments = paymentsTable(tables.payments);
  const store = postgresStore(db, { table: tables.records });

  const write = async (handle: NodePgDb | Tx, amount: number) => {
    const rows = await handle
      .insert(payments)
      .values({ amount, note: 'bench' })
      .returning({ id: payments.id });
    return rows[0]!.id;
  };

  return {
    id: 'postgres',
    label: 'Postgres',
    store,
    insert: (amount) => write(db, amount),
    insertTx: (tx, amount) => write(tx, amount),
    insertInTransaction: (amount) => db.transaction((tx) => write(tx, amount)),
    // The design floor's statements with the insert's id, for the adapters' fresh floor.
    insertWithRecord: (amount, key) => designs.oneTransactionMerged(key, amount),
    freshDesign: (key) => designs.oneTransactionMerged(key),
    replayDesign: (key) => designs.oneTransactionFirstTrip(key),
    // The store on a Pool runs guarded work in no context of its own.
    workContext: (work) => work(),
    roundTrip: () => pool.query('select 1'),
    roundTripDrizzle: () => db.execute(sql`select 1`),
    close,
  };
}
