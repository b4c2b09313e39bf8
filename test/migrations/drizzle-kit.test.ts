/**
 * SPEC S22 with drizzle-kit's real CLI: the two supported ways for an app that runs
 * drizzle-kit on its own schema (docs/migrations.md), on Postgres and SQLite.
 *
 * (a) The app re-exports our table from its schema, so drizzle-kit owns it: `generate` and
 *     `migrate` create it, `push` finds nothing to change.
 * (b) The package migrates its own table (`migratePostgres` / `migrateSqlite`) and the app's
 *     config leaves it out with `tablesFilter`: `generate`, `migrate` and `push` never touch it.
 *
 * `push` runs with `--force`, which accepts every data-loss statement without asking: if it
 * wanted to drop anything of ours, it would. Each Postgres case gets a throwaway database.
 * The schema files import the table from src/ (the tests run before any build); an app
 * writes `export { idempotencyRecords } from 'mutation-guard/postgres'`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import {
  migratePostgres,
  pgIdempotencyTable,
  postgresFunctionsSql,
  postgresStore,
} from '../../src/postgres/index.js';
import { migrateSqlite } from '../../src/sqlite/index.js';
import { postgresAvailability, TEST_DATABASE_URL } from '../support/postgres.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DRIZZLE_KIT = join(ROOT, 'node_modules/drizzle-kit/bin.cjs');
const pgAvailable = await postgresAvailability();

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** An app folder: its schema, its drizzle.config.ts, and node_modules to resolve drizzle-orm. */
function appFolder(schema: string, config: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-kit-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'schema.ts'), schema);
  const full = { schema: './schema.ts', out: './drizzle', ...config };
  writeFileSync(join(dir, 'drizzle.config.ts'), `export default ${JSON.stringify(full)};\n`);
  return dir;
}

/** Runs `drizzle-kit <command>` in `dir`, without a terminal, as CI would. */
function kit(dir: string, ...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [DRIZZLE_KIT, ...args, '--config', 'drizzle.config.ts'],
      { cwd: dir, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, output: `${stdout}\n${stderr}` });
      },
    );
    child.stdin?.end();
  });
}

/** The messages along an error's `cause` chain, joined. */
function causes(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) messages.push(e.message);
  return messages.join(' <- ');
}

/** The SQL drizzle-kit generated into the app's migrations folder. */
function generatedSql(dir: string): string {
  const folder = join(dir, 'drizzle');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .map((name) => readFileSync(join(folder, name), 'utf8'))
    .join('\n');
}

/**
 * `push --force` ran cleanly and none of its statements named our tables. (On SQLite,
 * drizzle-kit 0.31 may recreate an app table it has just created itself; that is the app's.)
 */
function expectNothingOfOursPushed(push: { code: number; output: string }) {
  expect(push.output).not.toMatch(/idempotency_records/);
  expect(push.output).not.toMatch(/Error/i);
  expect(push.code).toBe(0);
}

describe.skipIf(!pgAvailable.realPostgres)(
  `drizzle-kit on Postgres ${pgAvailable.skipReason ?? ''}`,
  () => {
    const PG_SCHEMA = `import { pgTable, text } from 'drizzle-orm/pg-core';
export const payments = pgTable('payments', { id: text('id').primaryKey() });
`;
    const REEXPORT = `export { idempotencyRecords } from '${join(ROOT, 'src/postgres/table.ts')}';\n`;

    /** A throwaway database for one case, dropped afterwards; its URL and a pool on it. */
    async function throwawayDatabase() {
      const name = `mg_kit_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${name}`;
      const pool = new pg.Pool({ connectionString: url.href, max: 2 });
      cleanup.push(async () => {
        await pool.end();
        const drop = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await drop.connect();
        await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await drop.end();
      });
      const tables = async () =>
        (
          await pool.query<{ name: string }>(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
          )
        ).rows.map((row) => row.name);
      return { url: url.href, pool, db: drizzlePg({ client: pool }), tables };
    }

    it('S22: (a) a re-exported table: generate and migrate create it, push changes nothing, and migratePostgres then names the owner', async () => {
      const database = await throwawayDatabase();
      const dir = appFolder(PG_SCHEMA + REEXPORT, {
        dialect: 'postgresql',
        dbCredentials: { url: database.url },
      });
      expect((await kit(dir, 'generate')).code).toBe(0);
      expect(generatedSql(dir)).toContain('CREATE TABLE "idempotency_records"');
      expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
      expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
      expect(await database.tables()).toEqual(['idempotency_records', 'payments']);
      await expect(migratePostgres(database.db)).rejects.toThrow(
        /table "idempotency_records" already exists, but "idempotency_records_migrations" has no record of creating it.*drizzle-kit/,
      );

      // drizzle-kit knows tables, not functions: until the app adds the store's functions as
      // a custom migration, a guarded mutation fails closed and says what to do.
      const guard = createGuard({ store: postgresStore(database.db) });
      const pay = () =>
        guard.run({
          scope: 's',
          key: 'k1',
          fingerprint: 'f',
          operation: 'pay',
          work: async () => 1,
        });
      const missing = await pay().catch((error: unknown) => error);
      expect(IdempotencyError.is(missing) && missing.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      expect(causes(missing)).toMatch(
        /records table "idempotency_records" has no function "idempotency_records_begin".*docs\/migrations\.md/,
      );
      // docs/migrations.md, "The store's functions": a custom migration holding them.
      expect((await kit(dir, 'generate', '--custom', '--name=mutation_guard_functions')).code).toBe(
        0,
      );
      const custom = readdirSync(join(dir, 'drizzle')).find((name) =>
        name.endsWith('_mutation_guard_functions.sql'),
      )!;
      writeFileSync(join(dir, 'drizzle', custom), await postgresFunctionsSql());
      expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
      expect(await pay()).toEqual({ value: 1, replayed: false });
      expect(await pay()).toEqual({ value: 1, replayed: true });
      // push still changes nothing of ours, functions included.
      expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
      expect(await pay()).toEqual({ value: 1, replayed: true });
    });

    it('S22: (a) a re-exported table in a schema of its own: generate creates both there, the functions follow with { schema }, and the store finds them', async () => {
      const database = await throwawayDatabase();
      const dir = appFolder(
        `${PG_SCHEMA}import { pgSchema } from 'drizzle-orm/pg-core';
import { pgIdempotencyTable } from '${join(ROOT, 'src/postgres/table.ts')}';
export const billing = pgSchema('billing');
export const idempotency = pgIdempotencyTable('idempotency_records', { schema: 'billing' });
`,
        { dialect: 'postgresql', dbCredentials: { url: database.url } },
      );
      expect((await kit(dir, 'generate')).code).toBe(0);
      expect(generatedSql(dir)).toContain('CREATE SCHEMA "billing"');
      expect(generatedSql(dir)).toContain('CREATE TABLE "billing"."idempotency_records"');
      expect((await kit(dir, 'generate', '--custom', '--name=mutation_guard_functions')).code).toBe(
        0,
      );
      const custom = readdirSync(join(dir, 'drizzle')).find((name) =>
        name.endsWith('_mutation_guard_functions.sql'),
      )!;
      writeFileSync(
        join(dir, 'drizzle', custom),
        await postgresFunctionsSql({ schema: 'billing' }),
      );
      expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
      // Nothing of ours in public: the table and its functions are billing's alone.
      expect(await database.tables()).toEqual(['payments']);
      const store = postgresStore(database.db, {
        table: pgIdempotencyTable('idempotency_records', { schema: 'billing' }),
      });
      const pay = () =>
        createGuard({ store }).run({
          scope: 's',
          key: 'k1',
          fingerprint: 'f',
          operation: 'pay',
          work: async () => 1,
        });
      expect(await pay()).toEqual({ value: 1, replayed: false });
      expect(await pay()).toEqual({ value: 1, replayed: true });
      const { rows } = await database.pool.query('SELECT key FROM billing.idempotency_records');
      expect(rows).toEqual([{ key: 'k1' }]);
    });

    it('S22: (b) migratePostgres plus tablesFilter: generate, migrate and push --force leave our tables and rows alone', async () => {
      const database = await throwawayDatabase();
      await migratePostgres(database.db);
      await database.pool.query(
        "INSERT INTO idempotency_records (scope, key, fingerprint, operation, outcome, result, expires_at, completed_at) VALUES ('s', 'k', 'f', 'op', 'committed', '1', now() + interval '1 day', now())",
      );
      const dir = appFolder(PG_SCHEMA, {
        dialect: 'postgresql',
        dbCredentials: { url: database.url },
        tablesFilter: ['!idempotency_records', '!idempotency_records_migrations'],
      });
      expect((await kit(dir, 'generate')).code).toBe(0);
      expect(generatedSql(dir)).not.toContain('idempotency_records');
      expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
      expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
      expect(await database.tables()).toEqual([
        'idempotency_records',
        'idempotency_records_migrations',
        'payments',
      ]);
      const { rows } = await database.pool.query('SELECT key FROM idempotency_records');
      expect(rows).toEqual([{ key: 'k' }]);
      expect(await migratePostgres(database.db)).toEqual({ applied: [] });
    });

    it('S22: moving a migratePostgres database to drizzle-kit: the documented edit lets migrate adopt the table, then push changes nothing', async () => {
      const database = await throwawayDatabase();
      await migratePostgres(database.db);
      const dir = appFolder(PG_SCHEMA + REEXPORT, {
        dialect: 'postgresql',
        dbCredentials: { url: database.url },
      });
      expect((await kit(dir, 'generate')).code).toBe(0);
      // docs/migrations.md: make the generated statements for our table IF NOT EXISTS.
      for (const name of readdirSync(join(dir, 'drizzle')).filter((n) => n.endsWith('.sql'))) {
        const file = join(dir, 'drizzle', name);
        writeFileSync(
          file,
          readFileSync(file, 'utf8')
            .replace(
              'CREATE TABLE "idempotency_records"',
              'CREATE TABLE IF NOT EXISTS "idempotency_records"',
            )
            .replace(
              'CREATE INDEX "idempotency_records_expires_at_idx"',
              'CREATE INDEX IF NOT EXISTS "idempotency_records_expires_at_idx"',
            ),
        );
      }
      expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
      await database.pool.query('DROP TABLE idempotency_records_migrations');
      expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
      expect(await database.tables()).toEqual(['idempotency_records', 'payments']);
    });
  },
);

describe('drizzle-kit on SQLite', () => {
  const SQLITE_SCHEMA = `import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
export const payments = sqliteTable('payments', { id: text('id').primaryKey() });
`;
  const REEXPORT = `export { idempotencyRecords } from '${join(ROOT, 'src/sqlite/table.ts')}';\n`;

  function databaseFile(dir: string) {
    const file = join(dir, 'app.db');
    const open = () => {
      const client = new Database(file);
      cleanup.push(() => {
        client.close();
      });
      return client;
    };
    const tables = () => {
      const client = new Database(file, { readonly: true });
      try {
        return client
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name",
          )
          .pluck()
          .all();
      } finally {
        client.close();
      }
    };
    return { file, open, tables };
  }

  it('S22: (a) a re-exported table: generate and migrate create it, push changes nothing, and migrateSqlite then names the owner', async () => {
    const dir = appFolder(SQLITE_SCHEMA + REEXPORT, {
      dialect: 'sqlite',
      dbCredentials: { url: 'app.db' },
    });
    const database = databaseFile(dir);
    expect((await kit(dir, 'generate')).code).toBe(0);
    expect(generatedSql(dir)).toContain('CREATE TABLE `idempotency_records`');
    expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
    expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
    expect(database.tables()).toEqual(['idempotency_records', 'payments']);
    expect(() => migrateSqlite(drizzleSqlite({ client: database.open() }))).toThrow(
      /table "idempotency_records" already exists, but "idempotency_records_migrations" has no record of creating it.*drizzle-kit/,
    );
  });

  it('S22: (b) migrateSqlite plus tablesFilter: generate, migrate and push --force leave our tables and rows alone', async () => {
    const dir = appFolder(SQLITE_SCHEMA, {
      dialect: 'sqlite',
      dbCredentials: { url: 'app.db' },
      tablesFilter: ['!idempotency_records', '!idempotency_records_migrations'],
    });
    const database = databaseFile(dir);
    const client = database.open();
    migrateSqlite(client);
    client
      .prepare(
        "INSERT INTO idempotency_records (scope, key, fingerprint, operation, outcome, result, expires_at, created_at, completed_at) VALUES ('s', 'k', 'f', 'op', 'committed', '1', 1, 1, 1)",
      )
      .run();
    client.close();
    expect((await kit(dir, 'generate')).code).toBe(0);
    expect(generatedSql(dir)).not.toContain('idempotency_records');
    expect(await kit(dir, 'migrate')).toMatchObject({ code: 0 });
    expectNothingOfOursPushed(await kit(dir, 'push', '--force', '--verbose'));
    expect(database.tables()).toEqual([
      'idempotency_records',
      'idempotency_records_migrations',
      'payments',
    ]);
    const reopened = database.open();
    expect(reopened.prepare('SELECT key FROM idempotency_records').pluck().all()).toEqual(['k']);
    expect(migrateSqlite(reopened)).toEqual({ applied: [] });
  });
});
