/**
 * SPEC S22: when the package's migrators cannot apply their migration, the error says why in
 * its own message (not only on `cause`): a table some other tool created, a table dropped by
 * hand behind its bookkeeping, or the database's reason for refusing a statement; and the ways
 * docs/migrations.md gives out of the first two work. Postgres on every driver; SQLite in memory.
 */
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres } from '../../src/postgres/index.js';
import { migrateSqlite } from '../../src/sqlite/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const drivers = [
  { name: 'node-postgres', open: createNodePgDb, real: true },
  { name: 'postgres.js', open: createPostgresJsDb, real: true },
  { name: 'PGlite', open: createPgliteDb, real: false },
] as const;

for (const driver of drivers) {
  const skip = driver.real && !pg.realPostgres;
  describe.skipIf(skip)(
    `migratePostgres errors on ${driver.name} ${skip ? pg.skipReason : ''}`,
    () => {
      // One connection (one PGlite instance) per driver; each case works on its own tables.
      let connection: { db: AnyPgDatabase; close: () => Promise<void> } | undefined;
      beforeAll(async () => {
        const { db, close } = driver.open();
        connection = { db: db as AnyPgDatabase, close };
        // PGlite starts on its first query; under load that takes seconds: let the hook pay.
        await connection.db.execute(sql`select 1`);
      });
      afterAll(async () => {
        await connection?.close();
      });

      function open(): { db: AnyPgDatabase; table: string } {
        const db = connection!.db;
        const table = uniqueTableName('mig_err');
        cleanup.push(async () => {
          await dropRecordsTable(db, table, `${table}_other`);
        });
        return { db, table };
      }

      it('S22: a records table another tool created is named as such, not "Failed query"', async () => {
        const { db, table } = open();
        await db.execute(sql.raw(`create table "${table}" (scope text, key text)`));
        await expect(migratePostgres(db, { table })).rejects.toThrow(
          new RegExp(
            `table "${table}" already exists, but "${table}_migrations" has no record of creating it`,
          ),
        );
      });

      it('S22: after the documented bookkeeping row, the migrator adopts a table drizzle-kit created', async () => {
        const { db, table } = open();
        await migratePostgres(db, { table });
        await db.execute(sql.raw(`drop table "${table}_migrations"`));
        await expect(migratePostgres(db, { table })).rejects.toThrow(/already exists/);
        await db.execute(
          sql.raw(
            `CREATE TABLE "${table}_migrations" (tag text PRIMARY KEY, hash text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
          ),
        );
        await db.execute(
          sql.raw(`INSERT INTO "${table}_migrations" (tag, hash) VALUES ('0000_init', 'adopted')`),
        );
        // Nothing came after the table: its functions are there already (with drizzle-kit, from
        // the custom migration of postgresFunctionsSql()).
        expect(await migratePostgres(db, { table })).toEqual({ applied: [] });
      });

      it('S22: a records table dropped by hand is named as missing, not reported up to date; dropping the bookkeeping too lets the migrator create it afresh', async () => {
        const { db, table } = open();
        await migratePostgres(db, { table });
        await db.execute(sql.raw(`drop table "${table}"`));
        await expect(migratePostgres(db, { table })).rejects.toThrow(
          new RegExp(
            `"${table}_migrations" records 0000_init as applied, but table "${table}" does not exist`,
          ),
        );
        // Nothing was changed: the bookkeeping still says what it said.
        const rows = await db.execute(
          sql.raw(`select count(*)::int as n from "${table}_migrations"`),
        );
        expect(rowsOf<{ n: number }>(rows)[0]?.n).toBe(1);
        await db.execute(sql.raw(`drop table "${table}_migrations"`));
        expect(await migratePostgres(db, { table })).toEqual({ applied: ['0000_init'] });
        const found = await db.execute(sql.raw(`select to_regclass('"${table}"')::text as found`));
        expect(rowsOf<{ found: string | null }>(found)[0]?.found).toBe(table);
      });

      it("S22: a statement the database refuses fails with the database's reason and SQLSTATE in the message", async () => {
        const { db, table } = open();
        // The index name the migration wants is taken by another table's index.
        await db.execute(sql.raw(`create table "${table}_other" (x int)`));
        await db.execute(sql.raw(`create index "${table}_expires_at_idx" on "${table}_other" (x)`));
        const error = await migratePostgres(db, { table }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(
          new RegExp(
            `migration 0000_init failed: relation "${table}_expires_at_idx" already exists \\(SQLSTATE 42P07\\)`,
          ),
        );
        expect((error as Error).cause).toBeDefined();
      });
    },
  );
}

describe('migrateSqlite errors', () => {
  function open() {
    const client = new Database(':memory:');
    cleanup.push(() => {
      client.close();
    });
    return client;
  }

  it('S22: a records table another tool created is named as such, not "already exists"', () => {
    const client = open();
    client.exec('CREATE TABLE idempotency_records (scope TEXT, key TEXT)');
    expect(() => migrateSqlite(client)).toThrow(
      /table "idempotency_records" already exists, but "idempotency_records_migrations" has no record of creating it/,
    );
  });

  it('S22: after the documented bookkeeping row, the migrator adopts a table drizzle-kit created', () => {
    const client = open();
    migrateSqlite(client);
    client.exec('DROP TABLE idempotency_records_migrations');
    expect(() => migrateSqlite(client)).toThrow(/already exists/);
    client.exec(
      'CREATE TABLE idempotency_records_migrations (tag TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    client.exec("INSERT INTO idempotency_records_migrations VALUES ('0000_init', 'adopted', 0)");
    expect(migrateSqlite(client)).toEqual({ applied: [] });
  });

  it('S22: a records table dropped by hand is named as missing, not reported up to date; dropping the bookkeeping too lets the migrator create it afresh', () => {
    const client = open();
    const { applied } = migrateSqlite(client);
    client.exec('DROP TABLE idempotency_records');
    expect(() => migrateSqlite(client)).toThrow(
      new RegExp(
        `"idempotency_records_migrations" records ${applied.join(', ')} as applied, but table "idempotency_records" does not exist`,
      ),
    );
    client.exec('DROP TABLE idempotency_records_migrations');
    expect(migrateSqlite(client)).toEqual({ applied });
    expect(
      client.prepare("SELECT name FROM sqlite_master WHERE name = 'idempotency_records'").get(),
    ).toEqual({ name: 'idempotency_records' });
  });

  it("S22: a statement the database refuses fails with the migration's tag and the database's reason", () => {
    const client = open();
    client.exec('CREATE TABLE other (x INTEGER)');
    client.exec('CREATE INDEX idempotency_records_expires_at_idx ON other (x)');
    expect(() => migrateSqlite(client)).toThrow(
      /migration 0000_init failed: index idempotency_records_expires_at_idx already exists/,
    );
    // Nothing was applied: the transaction rolled back.
    expect(
      client.prepare("SELECT name FROM sqlite_master WHERE name = 'idempotency_records'").get(),
    ).toBeUndefined();
  });
});
