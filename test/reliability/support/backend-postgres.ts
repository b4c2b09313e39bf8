/**
 * The Postgres half of backend.ts: a node-postgres pool, a postgres.js client or a PGlite
 * database (each optionally on sessions defaulting to SERIALIZABLE), the store, the payments
 * table.
 */
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import type { IdempotencyStore } from '../../../src/index.js';
import { rowsOf } from '../../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../../src/postgres/index.js';
import { dropRecordsTable } from '../../support/postgres.js';
import type { Backend, BackendConfig, DefaultIsolation, PaymentRow } from './backend.js';

async function connect(
  config: BackendConfig,
): Promise<{ db: AnyPgDatabase; close(): Promise<void> }> {
  const isolation = config.defaultIsolation;
  if (config.driver === 'pglite') {
    const client = await pgliteOf(isolation ?? 'server default');
    // Loaded only here: the server processes never use it.
    const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
    const db = drizzlePglite({ client });
    // No other process can reach its database, so the backend creates its own tables.
    await createTables(db, config.table);
    // The instance outlives the backend (see `pgliteOf`); its tables are this backend's own.
    return { db, close: async () => {} };
  }
  if (config.driver === 'postgres.js') {
    const client = postgres(config.location, {
      max: config.poolSize ?? 10,
      ...(isolation ? { connection: { default_transaction_isolation: isolation } } : {}),
      // Outage tests cut connections: a dead connect must fail fast (503), not hang.
      connect_timeout: 2,
      // And reconnect promptly. postgres.js's default backoff grows with every connection
      // error, shared by the whole pool (0.5-1 x min(3^n / 100, 20) s): after a few cuts
      // the next attempt is 10-20 s away. Calls meanwhile get no answer on postgres.js 3
      // (they wait for it) and an immediate 503 on 4 (it fails them at once), and on both
      // the database is tried again only then, up to 20 s after it is back.
      backoff: () => 0.1,
      // postgres.js 3 (3.4.9) drops the promise of its array-type query on each new
      // connection: a link cut during that query is an unhandled rejection, which ends the
      // process whatever the store does (porsager/postgres#1192). Apps on flaky links set this.
      // postgres.js 4 looks types up only when a query needs them and handles a failure.
      fetch_types: false,
      onnotice: () => {},
    });
    return { db: drizzlePostgresJs({ client }), close: () => client.end({ timeout: 2 }) };
  }
  const pool = new pg.Pool({
    connectionString: config.location,
    max: config.poolSize ?? 10,
    connectionTimeoutMillis: 2000,
    ...(isolation ? { options: `-c default_transaction_isolation=${isolation}` } : {}),
  });
  // An idle client's error (a cut connection) must not crash the process.
  pool.on('error', () => {});
  // pool.end() waits for every checked-out client: it returns only if the store gave back
  // each client, also those whose BEGIN failed on a cut connection.
  return { db: drizzle({ client: pool }), close: () => pool.end() };
}

/**
 * PGlite takes seconds to boot, so this process keeps one per default isolation, and each
 * backend works on tables of its own in it (as the conformance suite shares one). It ends
 * with the process.
 */
const pglites = new Map<string, Promise<PGlite>>();
function pgliteOf(isolation: DefaultIsolation | 'server default'): Promise<PGlite> {
  let instance = pglites.get(isolation);
  if (!instance) {
    instance = (async () => {
      const { PGlite } = await import('@electric-sql/pglite');
      const client = new PGlite();
      if (isolation !== 'server default') {
        await client.exec(`set default_transaction_isolation = '${isolation}'`);
      }
      return client;
    })();
    pglites.set(isolation, instance);
  }
  return instance;
}

export async function openPostgresBackend(config: BackendConfig): Promise<Backend> {
  const { db, close } = await connect(config);
  const { table } = config;
  const payments = sql.identifier(`${table}_payments`);
  return {
    kind: 'postgres',
    store: postgresStore(db, { table }) as IdempotencyStore<unknown>,
    async insertPayment(tx, row) {
      const result = await (tx as typeof db).execute(
        sql`insert into ${payments} (scope, key, amount) values (${row.scope}, ${row.key}, ${row.amount}) returning id`,
      );
      return Number(rowsOf<{ id: number }>(result)[0]!.id);
    },
    async payments() {
      const result = await db.execute(
        sql`select id, scope, key, amount from ${payments} order by id`,
      );
      return rowsOf<PaymentRow>(result).map((row) => ({ ...row, id: Number(row.id) }));
    },
    async records() {
      const result = await db.execute(
        sql`select scope, key, outcome from ${sql.identifier(table)}`,
      );
      return rowsOf<{ scope: string; key: string; outcome: string }>(result);
    },
    close,
  };
}

export async function migrateTables(url: string, table: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await createTables(drizzle({ client: pool }), table);
  } finally {
    await pool.end();
  }
}

/** The records table and the payments table. */
async function createTables(db: AnyPgDatabase, table: string): Promise<void> {
  await migratePostgres(db, { table });
  await db.execute(
    sql`create table if not exists ${sql.identifier(`${table}_payments`)} (id serial primary key, scope text not null, key text not null, amount integer not null)`,
  );
}

export async function dropTables(url: string, table: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await dropRecordsTable(drizzle({ client: pool }), table, `${table}_payments`);
  } finally {
    await pool.end();
  }
}
