/**
 * SPEC S22: when the package's migrators cannot apply their migration, the error says why in
 * its own message (not only on `cause`): a table some other tool created, or the database's
 * reason for refusing a statement. Postgres on every driver; SQLite in memory.
 */
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { type AnyPgDatabase, migratePostgres } from '../../src/postgres/index.js';
import { migrateSqlite } from '../../src/sqlite/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
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
      function open(): { db: AnyPgDatabase; table: string } {
        const { db, close } = driver.open();
        const table = uniqueTableName('mig_err');
        cleanup.push(async () => {
          await db.execute(
            sql.raw(`drop table if exists "${table}", "${table}_migrations", "${table}_other"`),
          );
          await close();
        });
        return { db: db as AnyPgDatabase, table };
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
