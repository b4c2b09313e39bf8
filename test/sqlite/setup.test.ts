/**
 * Setup mistakes the SQLite store refuses when it is created, not at the first request
 * (SPEC S22, S23).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  migrateSqlite,
  type SqliteDatabase,
  sqliteIdempotencyTable,
  sqliteStore,
} from '../../src/sqlite/index.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

function tempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mutation-guard-setup-'));
  cleanup.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

function connect(path: string): SqliteDatabase {
  const client = new Database(path);
  cleanup.push(() => client.close());
  const db = drizzle({ client });
  migrateSqlite(db);
  return db;
}

describe('sqliteStore: one connection per database file in a process (S23)', () => {
  it('S23: a store on a second connection to the same file is refused at creation, naming the fix', () => {
    const folder = tempFolder();
    sqliteStore(connect(join(folder, 'app.db')));
    expect(() => sqliteStore(connect(join(folder, 'app.db')))).toThrow(
      /already used by a store on another connection in this process.*pass the same Drizzle database/,
    );
  });

  it('S23: the same file through another path spelling or a symlink is recognised', () => {
    const folder = tempFolder();
    mkdirSync(join(folder, 'sub'));
    symlinkSync(join(folder, 'app.db'), join(folder, 'link.db'));
    sqliteStore(connect(join(folder, 'app.db')));
    expect(() => sqliteStore(connect(join(folder, 'sub', '..', './app.db')))).toThrow(
      /another connection/,
    );
    expect(() => sqliteStore(connect(join(folder, 'link.db')))).toThrow(/another connection/);
  });

  it('S23: several stores on one connection, another file, or a file whose first connection closed are fine', async () => {
    const folder = tempFolder();
    const first = connect(join(folder, 'app.db'));
    sqliteStore(first);
    migrateSqlite(first, { table: 'other_keys' });
    sqliteStore(first, { table: sqliteIdempotencyTable('other_keys') });
    sqliteStore(connect(join(folder, 'other.db')));
    first.$client.close();
    const reopened = sqliteStore(connect(join(folder, 'app.db')));
    const claim = await reopened.claimAndRun(
      { scope: 's', key: 'k', fingerprint: 'f', operation: 'op' },
      async () => ({
        value: 1,
        completion: { result: '1', outcome: 'committed', retentionMs: 1000 },
      }),
    );
    expect(claim.status).toBe('done');
  });

  it('S23: in-memory databases are private to their connection and never collide', () => {
    sqliteStore(connect(':memory:'));
    expect(() => sqliteStore(connect(':memory:'))).not.toThrow();
  });
});

describe('sqliteIdempotencyTable: the name is checked when the table is built (S22)', () => {
  it.each(['x"; DROP TABLE y; --', '', '1records', 'records-with-dash', 'a'.repeat(49)])(
    'S22: refuses %j with a TypeError',
    (name) => {
      expect(() => sqliteIdempotencyTable(name)).toThrow(TypeError);
      expect(() => sqliteIdempotencyTable(name)).toThrow(/letters, digits or underscores/);
      expect(() => migrateSqlite(connect(':memory:'), { table: name })).toThrow(TypeError);
    },
  );

  it('S22: accepts plain identifiers up to 48 characters, as on Postgres', () => {
    expect(() => sqliteIdempotencyTable('app_keys')).not.toThrow();
    expect(() => sqliteIdempotencyTable(`_${'a'.repeat(47)}`)).not.toThrow();
  });
});
