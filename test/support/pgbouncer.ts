/**
 * The tests that run the store behind PgBouncer in transaction mode (SPEC S27): where the
 * pooler listens, whether it answers, and database factories that connect through it.
 *
 * `.ci/pgbouncer.sh` starts it (PgBouncer 1.18, transaction pooling, 127.0.0.1:6439 in front
 * of the test database) and `.ci/run` exports its URL as TEST_PGBOUNCER_URL. Under CI=true
 * a pooler that does not answer fails the run; elsewhere its tests are skipped with a reason.
 *
 * Usage (top-level await is fine in vitest):
 *   const bouncer = await pgbouncerAvailability();
 *   describe.skipIf(!bouncer.available)(`... ${bouncer.skipReason ?? ''}`, ...)
 */
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import type { TestDb } from './postgres.js';

export const TEST_PGBOUNCER_URL =
  process.env.TEST_PGBOUNCER_URL ?? 'postgres://postgres@127.0.0.1:6439/test';

export interface PgBouncerAvailability {
  /** True when PgBouncer answers, in transaction mode, in front of the test database. */
  available: boolean;
  /** Why the tests that need it are skipped; undefined when they run. */
  skipReason: string | undefined;
  /** What `SHOW VERSION` said, e.g. "PgBouncer 1.18.0". */
  version: string | undefined;
}

let availability: Promise<PgBouncerAvailability> | undefined;

/** Decides once per test file whether the PgBouncer tests run. */
export function pgbouncerAvailability(): Promise<PgBouncerAvailability> {
  availability ??= probe();
  return availability;
}

async function probe(): Promise<PgBouncerAvailability> {
  try {
    const version = await adminQuery<{ version: string }>('SHOW VERSION');
    const databases = await adminQuery<{ name: string; pool_mode: string | null }>(
      'SHOW DATABASES',
    );
    const config = await adminQuery<{ key: string; value: string }>('SHOW CONFIG');
    const defaultMode = config.find((row) => row.key === 'pool_mode')?.value;
    const target = databases.find(
      (row) => row.name === new URL(TEST_PGBOUNCER_URL).pathname.slice(1),
    );
    const mode = target?.pool_mode || defaultMode;
    // Session pooling would pass every test without proving anything about S27.
    if (mode !== 'transaction') {
      throw new Error(`its pool_mode is ${mode ?? 'unknown'}, not transaction`);
    }
    await query(TEST_PGBOUNCER_URL, 'select 1');
    return { available: true, skipReason: undefined, version: version[0]?.version };
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(
        `CI=true requires PgBouncer in transaction mode at ${TEST_PGBOUNCER_URL} (.ci/pgbouncer.sh starts it), but: ${String(error)}`,
      );
    }
    const reason = `skipped: no PgBouncer in transaction mode at ${TEST_PGBOUNCER_URL} (${String(error)}); run .ci/pgbouncer.sh`;
    console.warn(`[test/support/pgbouncer] ${reason}`);
    return { available: false, skipReason: reason, version: undefined };
  }
}

/** A query on PgBouncer's admin console (the `pgbouncer` database of the same listener). */
function adminQuery<Row>(text: string): Promise<Row[]> {
  const admin = new URL(TEST_PGBOUNCER_URL);
  admin.pathname = '/pgbouncer';
  return query<Row>(admin.toString(), text);
}

async function query<Row>(url: string, text: string): Promise<Row[]> {
  // The admin console speaks only the simple query protocol: no parameters here.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end().catch(() => {});
  }
}

/** node-postgres Pool through PgBouncer: its statements are unnamed unless one names them. */
export function createNodePgDbViaPgBouncer(options: { max?: number; url?: string } = {}) {
  const pool = new pg.Pool({
    connectionString: options.url ?? TEST_PGBOUNCER_URL,
    max: options.max ?? 10,
  });
  pool.on('error', () => {});
  const db = drizzleNodePg({ client: pool });
  return { db, close: () => pool.end() } satisfies TestDb<typeof db>;
}

/**
 * postgres.js through PgBouncer. postgres.js prepares every statement under a name by
 * default (`prepare: true`), which PgBouncer before 1.21 cannot carry in transaction mode:
 * behind such a pooler the user's client needs `prepare: false`, which is the default here.
 * `prepare: true` exists to show what happens without it.
 *
 * And `max_pipeline: 1` (docs/postgres.md, "Driver settings"): postgres.js 4 pipelines
 * queries outside transactions on a busy connection, a query with parameters (unprepared)
 * as Parse/Describe/Flush right behind the previous query's Sync. PgBouncer 1.18 gives the
 * server connection back at that Sync's ReadyForQuery, while the server still owes the
 * answer to the Parse: it reaches another client, and both wait for ever (the store's
 * conformance suite hung). postgres.js 3 sent nothing behind such a query until it was done.
 */
export function createPostgresJsDbViaPgBouncer(
  options: { max?: number; prepare?: boolean; url?: string } = {},
) {
  const client = postgres(options.url ?? TEST_PGBOUNCER_URL, {
    max: options.max ?? 10,
    prepare: options.prepare ?? false,
    max_pipeline: 1,
    onnotice: () => {},
  });
  const db = drizzlePostgresJs({ client });
  // A connection stuck on a statement PgBouncer misrouted never answers: do not wait for it.
  return { db, close: () => client.end({ timeout: 1 }) } satisfies TestDb<typeof db>;
}
