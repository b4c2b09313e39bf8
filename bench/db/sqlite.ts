/**
 * The SQLite benchmark database: a real file (WAL, as the store configures it) in a temp
 * directory, not `:memory:`, because that is what a development setup writes to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { type BaseSQLiteDatabase, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { BenchDb } from './types.js';

const payments = sqliteTable('payments', {
  id: integer('id').primaryKey(),
  amount: integer('amount').notNull(),
  note: text('note'),
});

export function openSqliteBench(): BenchDb<SqliteDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-bench-'));
  const db = openSqlite(join(dir, 'bench.db'));
  db.$client.exec(
    'create table payments (id integer primary key, amount integer not null, note text)',
  );
  const store = sqliteStore(db);
  const selectOne = db.$client.prepare('select 1');

  /** The database or a Drizzle transaction on it: both write the same way. */
  const write = (handle: BaseSQLiteDatabase<'sync', RunResult>, amount: number) =>
    Number(handle.insert(payments).values({ amount, note: 'bench' }).run().lastInsertRowid);

  return {
    id: 'sqlite',
    label: 'SQLite file',
    store,
    insert: async (amount) => write(db, amount),
    insertTx: async (tx, amount) => write(tx, amount),
    insertInTransaction: async (amount) => db.transaction((tx) => write(tx, amount)),
    roundTrip: async () => selectOne.get(),
    roundTripDrizzle: async () => db.get(sql`select 1`),
    close: async () => {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
