/**
 * Opens the demo's storage: the SQLite file (no DATABASE_URL) or Postgres (DATABASE_URL),
 * with the idempotency table migrated by the package and the payments table created.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { IdempotencyStore } from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { DemoConfig } from './config.js';
import {
  type PaymentsRepository,
  type PgTx,
  postgresPaymentsRepository,
  sqlitePaymentsRepository,
} from './payments-repository.js';
import { maskPassword, redactUrl } from './redact.js';
import { CREATE_PG_PAYMENTS, CREATE_SQLITE_PAYMENTS } from './tables.js';

export interface AppDatabase<Tx> {
  /** Which store, and where, for the start-up line. */
  description: string;
  store: IdempotencyStore<Tx>;
  payments: PaymentsRepository<Tx>;
  close(): Promise<void>;
}

/** The transaction handle each dialect's store gives the guarded work. */
export interface Transactions {
  sqlite: SqliteDatabase;
  postgres: PgTx;
}
export type Dialect = keyof Transactions;

/**
 * The database of one dialect, told apart by `dialect`. Written as a map over the dialects,
 * so that code generic in the dialect (createApp) sees a store and a payments repository of
 * one and the same dialect, and TypeScript checks it once for both.
 */
export type OpenDatabase<D extends Dialect = Dialect> = {
  [K in D]: { dialect: K } & AppDatabase<Transactions[K]>;
}[D];

export async function openDatabase(config: DemoConfig): Promise<OpenDatabase> {
  return config.databaseUrl ? openPostgres(config.databaseUrl) : openSqliteFile(config.sqlitePath);
}

function openSqliteFile(path: string): OpenDatabase {
  const file = resolve(path);
  // `.data/` is git-ignored, so a fresh checkout does not have it yet.
  mkdirSync(dirname(file), { recursive: true });
  const db = openSqlite(file); // opens the file and applies the package's migrations
  db.$client.exec(CREATE_SQLITE_PAYMENTS);
  const store = sqliteStore(db); // also switches the file to WAL, which the reader relies on
  const reader = new Database(file, { readonly: true });
  return {
    dialect: 'sqlite',
    description: `SQLite (${path}; one process only)`,
    store,
    payments: sqlitePaymentsRepository(drizzleSqlite({ client: reader })),
    async close() {
      reader.close();
      db.$client.close();
    },
  };
}

async function openPostgres(url: string): Promise<OpenDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client's error (a server restart) must not crash the process; queries still fail.
  pool.on('error', (error) =>
    console.error('postgres pool error:', maskPassword(error.message, url)),
  );
  const db = drizzlePg({ client: pool });
  try {
    await migratePostgres(db); // safe when several processes start at once
    await createPaymentsTable(db);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    dialect: 'postgres',
    description: `Postgres (${redactUrl(url)})`,
    store: postgresStore(db),
    payments: postgresPaymentsRepository(db),
    close: () => pool.end(),
  };
}

/**
 * `CREATE TABLE IF NOT EXISTS` is not safe against itself: two processes starting at once can
 * both pass the check and one fails on a catalog unique constraint. A transaction-scoped
 * advisory lock makes the later ones wait and then find the table there.
 */
async function createPaymentsTable(db: ReturnType<typeof drizzlePg>): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('mutation-guard-demo:payments'))`);
    for (const statement of CREATE_PG_PAYMENTS) await tx.execute(sql.raw(statement));
  });
}
