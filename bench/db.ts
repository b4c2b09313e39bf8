/**
 * The databases the bench writes to, each with the one business write every case makes: one
 * `payments` row through Drizzle's query builder, unguarded (autocommit, or in a Drizzle
 * transaction of its own) or on the guard's transaction handle. Only the package's public API:
 * the stores, `openSqlite`, `migratePostgres`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core';
import {
  type BaseSQLiteDatabase,
  integer as int,
  sqliteTable,
  text as txt,
} from 'drizzle-orm/sqlite-core';
import pg from 'pg';
import type { IdempotencyStore } from '../src/index.js';
import {
  type AnyPgDatabase,
  migratePostgres,
  type PgTransactionOf,
  postgresStore,
} from '../src/postgres/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../src/sqlite/index.js';

export const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDb<Tx = unknown> {
  id: 'sqlite' | 'postgres';
  store: IdempotencyStore<Tx>;
  /** The business write, unguarded, autocommit. Resolves to the new row's id. */
  insert(amount: number): Promise<number>;
  /** The same write on the guard's transaction handle. */
  insertTx(tx: Tx, amount: number): Promise<number>;
  /** The same write in a Drizzle transaction of its own, no guard. */
  insertInTransaction(amount: number): Promise<number>;
  close(): Promise<void>;
}

const sqlitePayments = sqliteTable('payments', {
  id: int('id').primaryKey(),
  amount: int('amount').notNull(),
  note: txt('note'),
});

/** A SQLite file in WAL mode (as the store configures it), or `:memory:` when `path` says so. */
export function openSqliteBench(path?: string): BenchDb<SqliteDatabase> & { db: SqliteDatabase } {
  const dir = path ? undefined : mkdtempSync(join(tmpdir(), 'mutation-guard-bench-'));
  const db = openSqlite(path ?? join(dir!, 'bench.db'));
  db.$client.exec('create table payments (id integer primary key, amount integer, note text)');
  const write = (handle: BaseSQLiteDatabase<'sync', RunResult>, amount: number) =>
    Number(handle.insert(sqlitePayments).values({ amount, note: 'bench' }).run().lastInsertRowid);
  return {
    id: 'sqlite',
    db,
    store: sqliteStore(db),
    insert: async (amount) => write(db, amount),
    insertTx: async (tx, amount) => write(tx, amount),
    insertInTransaction: async (amount) => db.transaction((tx) => write(tx, amount)),
    close: async () => {
      db.$client.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Table names of one run's own, so that concurrent runs and test suites never share rows. */
export function runTables(prefix = 'bench') {
  const records = `${prefix}_${randomBytes(5).toString('hex')}`;
  return { records, payments: `${records}_payments` };
}
export type Tables = ReturnType<typeof runTables>;

/** The records table (the shipped migrations) and the business table, on any driver. */
export async function createTables(db: AnyPgDatabase, tables: Tables): Promise<void> {
  await migratePostgres(db, { table: tables.records });
  await db.execute(
    sql.raw(`create table ${tables.payments} (id serial primary key, amount integer, note text)`),
  );
}

/** Drops every table and function whose name starts with the run's records table. */
export async function dropTables(db: AnyPgDatabase, tables: Tables): Promise<void> {
  const like = `'${tables.records}%'`; // a name of our own: hex, no quotes
  await db.execute(
    sql.raw(`do $$ declare item record; begin
      for item in select oid::regprocedure as name from pg_proc where proname like ${like} loop
        execute 'drop function ' || item.name;
      end loop;
      for item in select tablename from pg_tables where tablename like ${like} loop
        execute 'drop table if exists ' || quote_ident(item.tablename) || ' cascade';
      end loop;
    end $$`),
  );
}

/** The business write and the store on a Drizzle database of any Postgres driver. */
export function postgresBench<Db extends AnyPgDatabase>(
  db: Db,
  tables: Tables,
  close: () => Promise<void>,
): BenchDb<PgTransactionOf<Db>> {
  const payments = pgTable(tables.payments, {
    id: serial('id').primaryKey(),
    amount: integer('amount'),
    note: text('note'),
  });
  const write = async (handle: AnyPgDatabase, amount: number) => {
    const rows = await handle
      .insert(payments)
      .values({ amount, note: 'bench' })
      .returning({ id: payments.id });
    return rows[0]!.id;
  };
  return {
    id: 'postgres',
    store: postgresStore(db, { table: tables.records }),
    insert: (amount) => write(db, amount),
    insertTx: (tx, amount) => write(tx as AnyPgDatabase, amount),
    insertInTransaction: (amount) => db.transaction((tx) => write(tx, amount)),
    close,
  };
}

/** The timed Postgres: the real server through a node-postgres Pool, tables of its own. */
export async function openPostgresBench(url = DATABASE_URL, max = 4) {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  const db = drizzle({ client: pool });
  const tables = runTables();
  await createTables(db, tables);
  return postgresBench(db, tables, async () => {
    await dropTables(db, tables);
    await pool.end();
  });
}
