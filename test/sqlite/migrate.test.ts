import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  idempotencyRecords,
  migrateSqlite,
  openSqlite,
  sqliteIdempotencyTable,
  sqliteStore,
} from '../../src/sqlite/index.js';
import { renameTable } from '../../src/sqlite/migrate.js';

const open: Database.Database[] = [];
function fresh() {
  const client = new Database(':memory:');
  open.push(client);
  return drizzle({ client });
}
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});

function objects(client: Database.Database) {
  return client
    .prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
    .all();
}

/** Runs `key` through `store`: 'done' the first time, 'exists' after. */
const runKey = async (
  store: { claimAndRun: ReturnType<typeof sqliteStore>['claimAndRun'] },
  key: string,
) =>
  (
    await store.claimAndRun({ scope: 's', key, fingerprint: 'f', operation: 'op' }, async () => ({
      value: key,
      completion: { result: '"r"', outcome: 'committed', retentionMs: 60_000 },
    }))
  ).status;

describe('migrateSqlite', () => {
  it('S22: applies the shipped migrations once; a second call is a no-op', () => {
    const db = fresh();
    expect(migrateSqlite(db)).toEqual({ applied: ['0000_init'] });
    expect(migrateSqlite(db)).toEqual({ applied: [] });
    expect(objects(db.$client)).toEqual([
      { type: 'table', name: 'idempotency_records' },
      { type: 'index', name: 'idempotency_records_expires_at_idx' },
      { type: 'table', name: 'idempotency_records_migrations' },
    ]);
    const [row] = db.$client.prepare('SELECT tag, hash FROM idempotency_records_migrations').all();
    expect(row).toMatchObject({ tag: '0000_init', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('S22: the shipped migration matches the table definition (regenerate if this fails)', () => {
    const db = fresh();
    migrateSqlite(db);
    const columns = db.$client.prepare('PRAGMA table_info(idempotency_records)').all() as {
      name: string;
      notnull: number;
      pk: number;
    }[];
    const expected = getTableConfig(idempotencyRecords).columns.map((c) => ({
      name: c.name,
      notnull: c.notNull ? 1 : 0,
    }));
    expect(columns.map(({ name, notnull }) => ({ name, notnull }))).toEqual(expected);
    expect(columns.filter((c) => c.pk > 0).map((c) => c.name)).toEqual(['scope', 'key']);
  });

  it('S22: a custom table name renames the table, its index and its bookkeeping', async () => {
    const db = fresh();
    expect(migrateSqlite(db, { table: 'app_keys' })).toEqual({ applied: ['0000_init'] });
    expect(migrateSqlite(db, { table: 'app_keys' })).toEqual({ applied: [] });
    expect(objects(db.$client)).toEqual([
      { type: 'table', name: 'app_keys' },
      { type: 'index', name: 'app_keys_expires_at_idx' },
      { type: 'table', name: 'app_keys_migrations' },
    ]);
    // The check constraint was renamed too: a bad outcome is refused.
    expect(() =>
      db.$client
        .prepare(
          "INSERT INTO app_keys (scope, key, fingerprint, operation, outcome, result, expires_at, created_at, completed_at) VALUES ('s','k','f','o','bogus','1',1,1,1)",
        )
        .run(),
    ).toThrow(/CHECK constraint failed: app_keys_outcome_check/);
    const store = sqliteStore(db, { table: sqliteIdempotencyTable('app_keys') });
    expect(await runKey(store, 'k1')).toBe('done');
    expect(await store.read({ scope: 's', key: 'k1' })).toMatchObject({ result: '"r"' });
  });

  it('S22: two tables on one connection stay apart', async () => {
    const db = fresh();
    migrateSqlite(db);
    migrateSqlite(db, { table: 'other_keys' });
    const a = sqliteStore(db);
    const b = sqliteStore(db, { table: sqliteIdempotencyTable('other_keys') });
    expect(await runKey(a, 'k1')).toBe('done');
    expect(await runKey(b, 'k1')).toBe('done');
  });

  it('S22: a store given the table name as a string uses that table', async () => {
    const db = fresh();
    migrateSqlite(db);
    migrateSqlite(db, { table: 'other_keys' });
    const byName = sqliteStore(db, { table: 'other_keys' });
    const byTable = sqliteStore(db, { table: sqliteIdempotencyTable('other_keys') });
    expect(await runKey(byName, 'k1')).toBe('done');
    expect(await byTable.read({ scope: 's', key: 'k1' })).toMatchObject({ result: '"r"' });
    expect(await sqliteStore(db).read({ scope: 's', key: 'k1' })).toBeUndefined();
    expect(() => sqliteStore(db, { table: 'bad-name' })).toThrow(TypeError);
  });

  it('S22: refuses table names that are not plain identifiers', () => {
    expect(() => migrateSqlite(fresh(), { table: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
  });

  it('S22: renameTable touches quoted identifiers of the default table only', () => {
    const statement =
      'CREATE TABLE `__new_idempotency_records` (`idempotency_records_note` text); INSERT INTO "idempotency_records" SELECT * FROM idempotency_records_other';
    expect(renameTable(statement, 'keys')).toBe(
      'CREATE TABLE `__new_keys` (`keys_note` text); INSERT INTO "keys" SELECT * FROM idempotency_records_other',
    );
  });

  it('S22: openSqlite gives a migrated database ready for the store', async () => {
    const db = openSqlite(':memory:', { table: 'quick_keys' });
    open.push(db.$client);
    const store = sqliteStore(db, { table: sqliteIdempotencyTable('quick_keys') });
    expect(await runKey(store, 'k1')).toBe('done');
  });
});
