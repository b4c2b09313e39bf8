/**
 * What the Postgres-backed tests share: which server to use, database factories for the
 * three drivers, and unique table names so that parallel test files never share rows.
 *
 * Usage (top-level await is fine in vitest):
 *   const pg = await postgresAvailability();
 *   describe.skipIf(!pg.realPostgres)(`... ${pg.skipReason ?? ''}`, ...)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import type { AnyPgDatabase } from '../../src/postgres/db.js';
import { functionNames } from '../../src/postgres/functions.js';
import type { ClaimRequest } from '../../src/store/index.js';

/**
 * The major version of the postgres.js installed (CI runs 4, and 3 in its oldest set), for
 * the tests that show a behaviour of one of them (docs/postgres.md, "postgres.js 3 and 4").
 */
export const POSTGRES_JS_MAJOR = Number(
  (
    JSON.parse(
      readFileSync(new URL('../../node_modules/postgres/package.json', import.meta.url), 'utf8'),
    ) as { version: string }
  ).version.split('.')[0],
);

export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface PostgresAvailability {
  /** True when the real server answers; multi-connection tests need it. */
  realPostgres: boolean;
  /** Why tests that need the real server are skipped; undefined when they run. */
  skipReason: string | undefined;
}

let availability: Promise<PostgresAvailability> | undefined;

/**
 * Decides once per test file which Postgres to use. Under CI (`CI=true`) the real server is
 * required: an unreachable server fails the run loudly instead of silently skipping tests.
 * Locally it falls back to PGlite (single connection) and says which tests it skips and why.
 */
export function postgresAvailability(): Promise<PostgresAvailability> {
  availability ??= probe();
  return availability;
}

async function probe(): Promise<PostgresAvailability> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
    await client.query('select 1');
    return { realPostgres: true, skipReason: undefined };
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(
        `CI=true requires the real Postgres at ${TEST_DATABASE_URL}, but it is unreachable: ${String(error)}`,
      );
    }
    const reason = `skipped: no Postgres at ${TEST_DATABASE_URL} (${String(error)}); PGlite has a single connection`;
    console.warn(`[test/support/postgres] ${reason}`);
    return { realPostgres: false, skipReason: reason };
  } finally {
    await client.end().catch(() => {});
  }
}

/** A Drizzle database plus how to close its connections. */
export interface TestDb<Db> {
  db: Db;
  close(): Promise<void>;
}

export interface TestDbOptions {
  /** Pool size (>= 2 so that a test can hold a transaction open while another claims). */
  max?: number;
  url?: string;
  /**
   * The server's `default_transaction_isolation` for every connection, to test that the
   * store copes with a stricter default (SPEC S24).
   */
  defaultIsolation?: 'serializable' | 'repeatable read';
  /**
   * Seconds to wait for a connection before failing (the drivers' defaults: none for
   * node-postgres, 30 for postgres.js). Fault tests set it so that a connection that can
   * never come back fails within the test instead of outlasting it.
   */
  connectTimeout?: number;
  /**
   * The sessions' `search_path`: a schema placed before pg_catalog shadows the server's own
   * functions (how a test stands in for an engine whose advisory locks do nothing).
   */
  searchPath?: string;
}

/** The server settings of `options`, as `-c name=value` pairs of a startup `options` string. */
function sessionSettings(options: TestDbOptions): Record<string, string> {
  return {
    ...(options.defaultIsolation
      ? { default_transaction_isolation: options.defaultIsolation }
      : {}),
    ...(options.searchPath ? { search_path: options.searchPath } : {}),
  };
}

/** node-postgres Pool. */
export function createNodePgDb(options: TestDbOptions = {}) {
  const settings = sessionSettings(options);
  const pool = new pg.Pool({
    connectionString: options.url ?? TEST_DATABASE_URL,
    max: options.max ?? 10,
    ...(options.connectTimeout ? { connectionTimeoutMillis: options.connectTimeout * 1000 } : {}),
    ...(Object.keys(settings).length > 0
      ? {
          options: Object.entries(settings)
            .map(([name, value]) => `-c ${name}=${value.replaceAll(' ', '\\ ')}`)
            .join(' '),
        }
      : {}),
  });
  // An idle client's error (server restart) must not crash the test process.
  pool.on('error', () => {});
  const db = drizzleNodePg({ client: pool });
  return { db, close: () => pool.end() } satisfies TestDb<typeof db>;
}

/** postgres.js. */
export function createPostgresJsDb(options: TestDbOptions = {}) {
  const settings = sessionSettings(options);
  const client = postgres(options.url ?? TEST_DATABASE_URL, {
    max: options.max ?? 10,
    ...(options.connectTimeout ? { connect_timeout: options.connectTimeout } : {}),
    ...(Object.keys(settings).length > 0 ? { connection: settings } : {}),
    // `create table if not exists` notices would otherwise be printed.
    onnotice: () => {},
  });
  const db = drizzlePostgresJs({ client });
  return { db, close: () => client.end({ timeout: 5 }) } satisfies TestDb<typeof db>;
}

/** PGlite, in memory: one connection, a fresh database per call. */
export function createPgliteDb(options: Pick<TestDbOptions, 'defaultIsolation'> = {}) {
  const client = new PGlite();
  if (options.defaultIsolation) {
    // PGlite runs queries in order on its one connection, so this lands before any other.
    client
      .exec(`set default_transaction_isolation = '${options.defaultIsolation}'`)
      .catch((error: unknown) => console.error(error));
  }
  const db = drizzlePglite({ client });
  return { db, close: () => client.close() } satisfies TestDb<typeof db>;
}

/**
 * A table name no other test file or run uses (lower case, within the 48 characters that
 * `pgIdempotencyTable` allows). Each suite migrates its own.
 */
export function uniqueTableName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30);
  return `${clean}_${randomBytes(6).toString('hex')}`;
}

/**
 * Claim requests with a fresh key each (`key-1`, `key-2`, ...): acct_1, fingerprint fp-a,
 * unless overridden.
 */
export function claimRequests(): (overrides?: Partial<ClaimRequest>) => ClaimRequest {
  let n = 0;
  return (overrides = {}) => ({
    scope: 'acct_1',
    key: `key-${++n}`,
    fingerprint: 'fp-a',
    operation: 'createPayment',
    ...overrides,
  });
}

/**
 * Deletes what the given demo accounts left in the payments demo's tables on the shared
 * database (its payments and their idempotency records); never touches anyone else's rows.
 */
export async function deleteDemoRowsOf(accounts: string[]): Promise<void> {
  if (accounts.length === 0) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('delete from payments where account_id = any($1)', [accounts]);
    await client.query('delete from idempotency_records where scope = any($1)', [accounts]);
  } finally {
    await client.end();
  }
}

/**
 * Drops a records table with everything migratePostgres made for it (its bookkeeping table
 * and its server-side functions, which `drop table` leaves behind), plus `others` (the test's
 * business tables).
 */
export async function dropRecordsTable(
  db: AnyPgDatabase,
  table: string,
  ...others: string[]
): Promise<void> {
  const tables = [...others, table, `${table}_migrations`].map((name) => `"${name}"`).join(', ');
  await db.execute(sql.raw(`drop table if exists ${tables}`));
  for (const name of Object.values(functionNames(table))) {
    await db.execute(sql.raw(`drop function if exists "${name}"`));
  }
}

/**
 * The drivers that reach the server, each again on sessions defaulting to SERIALIZABLE
 * (S24): where a fault that needs the server runs.
 */
export const SERVER_DRIVERS: {
  name: string;
  open(options?: TestDbOptions): TestDb<AnyPgDatabase>;
}[] = (
  [
    ['node-postgres', createNodePgDb],
    ['postgres.js', createPostgresJsDb],
  ] as const
).flatMap(([name, create]) => [
  { name, open: (options: TestDbOptions = {}) => create(options) },
  {
    name: `${name}, default serializable`,
    open: (options: TestDbOptions = {}) => create({ ...options, defaultIsolation: 'serializable' }),
  },
]);
