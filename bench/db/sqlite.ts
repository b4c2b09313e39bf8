/**
 * The SQLite benchmark database: a real file (WAL, as the store configures it) in a temp
 * directory, not `:memory:`, because that is what a development setup writes to.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { type BaseSQLiteDatabase, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { BenchDb } from './types.js';

/** The business table: the same in the bench's database and in bench/designs.ts. */
export const payments = sqliteTable('payments', {
  id: integer('id').primaryKey(),
  amount: integer('amount').notNull(),
  note: text('note'),
});

/**
 * The business write, unguarded and guarded alike: one row through Drizzle's query builder, on
 * the database or on a Drizzle transaction on it.
 */
export function writePayment(handle: BaseSQLiteDatabase<'sync', RunResult>, amount: number) {
  return Number(handle.insert(payments).values({ amount, note: 'bench' }).run().lastInsertRowid);
}

export function openSqliteBench(): BenchDb<SqliteDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-bench-'));
  const db = openSqlite(join(dir, 'bench.db'));
  db.$client.exec(
    'create table payments (id integer primary key, amount integer not null, note text)',
  );
  const store = sqliteStore(db);
  const selectOne = db.$client.prepare('select 1');
  const withRecord = recordWrittenLast(db);

  return {
    id: 'sqlite',
    label: 'SQLite file',
    store,
    insert: async (amount) => writePayment(db, amount),
    insertTx: async (tx, amount) => writePayment(tx, amount),
    insertInTransaction: async (amount) => db.transaction((tx) => writePayment(tx, amount)),
    insertWithRecord: async (amount, key) => withRecord(amount, key),
    freshDesign: async (key) => withRecord(42, key),
    workContext: inFrame,
    roundTrip: async () => selectOne.get(),
    roundTripDrizzle: async () => db.get(sql`select 1`),
    close: async () => {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bench's own frame, as the store's: entered per call, disabled once no call is in it. */
const frame = new AsyncLocalStorage<object>();
let framed = 0;

/**
 * Runs `work` in an AsyncLocalStorage frame the way the SQLite store runs guarded work: on
 * Node 20 and 22 every promise made while one is enabled costs more, so the store disables
 * its own whenever no transaction is open (src/sqlite/lock.ts), and this one likewise.
 */
async function inFrame<T>(work: () => Promise<T>): Promise<T> {
  framed++;
  try {
    return await frame.run({}, work);
  } finally {
    if (--framed === 0) frame.disable();
  }
}

/**
 * The business write in the least a transaction that stores its result with it can be:
 * BEGIN IMMEDIATE, a look-up of the key, the write, one INSERT of the complete record, COMMIT
 * on the store's own table: bench/designs.ts measures it as "one transaction, record written
 * last", and the framework cases' fresh floor (`insertWithRecord`) calls it.
 */
export function recordWrittenLast(db: SqliteDatabase) {
  const c = db.$client;
  const begin = c.prepare('begin immediate');
  const commit = c.prepare('commit');
  const look = c.prepare(
    "select outcome, result from idempotency_records where scope = 'bench' and key = ?",
  );
  const record = c.prepare(
    `insert into idempotency_records (scope, key, fingerprint, operation, outcome, result,
      expires_at, created_at, completed_at)
     values ('bench', ?, 'f', 'pay', 'committed', ?, ?, ?, ?)`,
  );
  const day = 86_400_000;
  return (amount: number, key: string): number => {
    const now = Date.now();
    begin.run();
    try {
      look.get(key);
      const id = writePayment(db, amount);
      record.run(key, `{"id":${id}}`, now + day, now, now);
      commit.run();
      return id;
    } catch (error) {
      if (c.inTransaction) c.exec('rollback');
      throw error;
    }
  };
}
