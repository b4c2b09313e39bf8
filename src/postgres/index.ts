/**
 * mutation-guard/postgres: the store on Drizzle + any Postgres driver Drizzle supports
 * (node-postgres, postgres.js, PGlite) (SPEC S22, S24). Imports no driver itself.
 *
 *   const db = drizzle({ client: new pg.Pool({ connectionString }) });
 *   await migratePostgres(db);
 *   const guard = createGuard({ store: postgresStore(db) });
 */

export { DEFAULT_TABLE_NAME } from '../store/table-name.js';
export type { AnyPgDatabase, PgTransactionOf } from './db.js';
export {
  type MigratePostgresOptions,
  type MigratePostgresResult,
  migratePostgres,
  postgresFunctionsSql,
} from './migrate.js';
export { type PostgresStoreOptions, postgresStore } from './store.js';
export {
  idempotencyRecords,
  type PgIdempotencyTable,
  type PgIdempotencyTableOptions,
  pgIdempotencyTable,
} from './table.js';
