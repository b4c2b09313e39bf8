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
  records(): Promise<{ scope: string; key: string; outcome: string }[]>;
  close(): Promise<void>;
}

export interface BackendConfig {
  kind: StoreKind;
  /** SQLite file path, or Postgres URL. */
  location: string;
  /** Idempotency table name; the payments table is `<table>_payments`. */
  table: string;
  /** SQLite only: the store's clock (tests drive retention by hand). */
  now?: () => number;
  /** Postgres only: pool size. */
  poolSize?: number;
  /**
   * Postgres only: the driver (S24: the fault suites run on each). PGlite lives in this
   * process: `location` is ignored, and the backend creates its own tables.
   * @default 'node-postgres'
   */
  driver?: PostgresDriver | 'pglite';
  /** Postgres only: the sessions' `default_transaction_isolation` (the server's own if unset). */
  defaultIsolation?: DefaultIsolation;
}

/** The drivers that reach a Postgres server, from any number of processes. */
export type PostgresDriver = 'node-postgres' | 'postgres.js';
export const POSTGRES_DRIVERS: PostgresDriver[] = ['node-postgres', 'postgres.js'];

/** The stricter server default every fault also runs under, as the conformance suite does. */
export type DefaultIsolation = 'serializable';

/** Where a Postgres fault runs: a driver, and the isolation its sessions default to. */
export interface PostgresTarget {
  /** For test names: the driver, and the default isolation when it is not the server's. */
  name: string;
  driver: PostgresDriver | 'pglite';
  defaultIsolation?: DefaultIsolation;
}

/** A target that reaches the server: any number of processes can share its database. */
export type ServerTarget = PostgresTarget & { driver: PostgresDriver };

/**
 * S24: the real server through each driver, and each again on sessions defaulting to
 * SERIALIZABLE. For faults that need the server or several processes.
 */
export const SERVER_TARGETS: ServerTarget[] = POSTGRES_DRIVERS.flatMap((driver) => [
  { name: driver, driver },
  { name: `${driver}, default serializable`, driver, defaultIsolation: 'serializable' as const },
]);

/**
 * PGlite: one connection inside this process. It fits faults played out in one process; no
 * second process can open its database, and it has no server to crash or link to cut.
 */
export const PGLITE_TARGET: PostgresTarget = { name: 'PGlite', driver: 'pglite' };

/** A store a fault runs on: SQLite, or Postgres through one target. */
export interface StoreTarget {
  /** For test names: `sqlite`, or `postgres (<target name>)`. */
  name: string;
  postgres?: PostgresTarget;
}

/**
 * For faults played out in this process: SQLite, the Postgres server through every server
 * target, and PGlite.
 */
export const IN_PROCESS_STORES: StoreTarget[] = [
  { name: 'sqlite' },
  ...[...SERVER_TARGETS, PGLITE_TARGET].map((postgres) => ({
    name: `postgres (${postgres.name})`,
    postgres,
  })),
];

/** Whether a store needs the Postgres server (and so its tables migrated there first). */
export function needsServer(store: StoreTarget): boolean {
  return store.postgres !== undefined && store.postgres.driver !== 'pglite';
}

/** The backend options of a target. */
export function targetConfig(
  target: PostgresTarget,
): Pick<BackendConfig, 'driver' | 'defaultIsolation'> {
  return {
    driver: target.driver,
    ...(target.defaultIsolation ? { defaultIsolation: target.defaultIsolation } : {}),
  };
}

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
