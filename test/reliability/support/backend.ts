/**
 * The two stores the reliability suite runs on, behind one shape: a guard's store, a
 * `payments` table written through the guarded transaction, and ways to read both tables
 * back from outside any transaction. Used in-process by the tests and by the server process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdempotencyStore } from '../../../src/index.js';

export type StoreKind = 'sqlite' | 'postgres';

/** One committed business effect: what the guarded mutation wrote. */
export interface PaymentRow {
  id: number;
  scope: string;
  key: string;
  amount: number;
}

export interface Backend {
  kind: StoreKind;
  store: IdempotencyStore<unknown>;
  /**
   * Writes a payment through the guarded transaction `tx`. No unique constraint on
   * (scope, key): a double execution must show up as two rows, not as a constraint error.
   */
  insertPayment(tx: unknown, row: Omit<PaymentRow, 'id'>): Promise<number>;
  payments(): Promise<PaymentRow[]>;
  /** Rows of the idempotency table, for "never stored" and boundedness checks. */
  records(): Promise<{ scope: string; key: string; state: string }[]>;
  close(): Promise<void>;
}

export interface BackendConfig {
  kind: StoreKind;
  /** SQLite file path, or Postgres URL. */
  location: string;
  /** Idempotency table name; the payments table is `<table>_payments`. */
  table: string;
  /** SQLite only: the store's clock (tests drive leases and retention by hand). */
  now?: () => number;
  /** Postgres only: pool size. */
  poolSize?: number;
  /** Postgres only: the driver (S24: the fault suites run on both). */
  driver?: PostgresDriver;
}

export type PostgresDriver = 'node-postgres' | 'postgres.js';
export const POSTGRES_DRIVERS: PostgresDriver[] = ['node-postgres', 'postgres.js'];

/** A fresh SQLite file in its own temp folder (each test its own file, STYLE). */
export function tempSqliteFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'mg-reliability-')), 'app.db');
}

/**
 * Opens a backend. SQLite migrates itself (safe across processes: BEGIN IMMEDIATE); for
 * Postgres call `migratePostgresTables` once first, before several processes open it.
 */
export async function openBackend(config: BackendConfig): Promise<Backend> {
  // Each driver is loaded only when used: a server process starts faster without the other.
  return config.kind === 'sqlite'
    ? (await import('./backend-sqlite.js')).openSqliteBackend(config)
    : (await import('./backend-postgres.js')).openPostgresBackend(config);
}

/** Creates the Postgres tables once, before several processes open them. */
export async function migratePostgresTables(url: string, table: string): Promise<void> {
  return (await import('./backend-postgres.js')).migrateTables(url, table);
}

/** Drops what `migratePostgresTables` created. */
export async function dropPostgresTables(url: string, table: string): Promise<void> {
  return (await import('./backend-postgres.js')).dropTables(url, table);
}
