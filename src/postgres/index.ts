/**
 * mutation-guard/postgres: the store on Drizzle + any Postgres driver Drizzle supports
 * (node-postgres, postgres.js, PGlite) (SPEC S24). Imports no driver itself.
 */

export { DEFAULT_TABLE_NAME } from '../store/table-name.js';
export type { AnyPgDatabase, PgTransactionOf } from './db.js';
export type { MigratePostgresOptions, MigratePostgresResult } from './migrate.js';
export { migratePostgres, postgresFunctionsSql } from './migrate.js';
export type { PostgresStoreOptions } from './store.js';
export { postgresStore } from './store.js';
export type { PgIdempotencyTable } from './table.js';
export { idempotencyRecords, pgIdempotencyTable } from './table.js';
