/**
 * mutation-guard/postgres: the store on Drizzle + any Postgres driver Drizzle supports
 * (node-postgres, postgres.js, PGlite) (SPEC S24). Imports no driver itself.
 */
export type { AnyPgDatabase, PgTransactionOf } from './db.js';
export type { MigratePostgresOptions, MigratePostgresResult } from './migrate.js';
export { migratePostgres, postgresFunctionsSql } from './migrate.js';
export type { PostgresStoreOptions } from './store.js';
export { postgresStore } from './store.js';
export type { PgIdempotencyTable } from './table.js';
export { idempotencyRecords, pgIdempotencyTable } from './table.js';
