/** A one-call start for development: a connection, Drizzle on it, and the table migrated. */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { SqliteDatabase } from './db.js';
import { migrateSqlite } from './migrate.js';

export interface OpenSqliteOptions {
  /**
   * The idempotency table's name (pass the same table to `sqliteStore`).
   * @default 'idempotency_records'
   */
  table?: string;
}

/**
 * Opens (or creates) the database file at `path`, wraps it in Drizzle and applies the shipped
 * migrations. Pass the result to `sqliteStore`.
 * @param path a file path, or ':memory:'. @default ':memory:'
 */
export function openSqlite(path = ':memory:', options: OpenSqliteOptions = {}): SqliteDatabase {
  const db = drizzle({ client: new Database(path) });
  migrateSqlite(db, options);
  return db;
}
