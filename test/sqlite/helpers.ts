/** Test databases and a hand-driven clock for the SQLite store's tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrateSqlite, type SqliteDatabase } from '../../src/sqlite/index.js';

export type DatabaseKind = 'file' | 'memory';
export const KINDS: DatabaseKind[] = ['file', 'memory'];

export interface TestDatabase {
  db: SqliteDatabase;
  close(): void;
}

/** A migrated database, in a fresh temp folder or in memory, with a `business` table. */
export function openTestDatabase(kind: DatabaseKind, table?: string): TestDatabase {
  const folder = kind === 'file' ? mkdtempSync(join(tmpdir(), 'mutation-guard-sqlite-')) : '';
  const client = new Database(kind === 'file' ? join(folder, 'test.db') : ':memory:');
  const db = drizzle({ client });
  migrateSqlite(db, table === undefined ? {} : { table });
  client.exec('CREATE TABLE business (id TEXT PRIMARY KEY NOT NULL, note TEXT)');
  return {
    db,
    close() {
      client.close();
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A clock that moves only when told to, for retention. */
export function manualClock(start = 1_700_000_000_000) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

export function businessIds(db: SqliteDatabase): string[] {
  return db.$client.prepare('SELECT id FROM business ORDER BY id').pluck().all() as string[];
}

export function insertBusiness(db: SqliteDatabase, id: string): void {
  db.$client.prepare('INSERT INTO business (id) VALUES (?)').run(id);
}
