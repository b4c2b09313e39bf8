/**
 * mutation-guard/sqlite: the store on Drizzle + better-sqlite3 (SPEC S22, S23), for
 * development and single-process use.
 *
 *   const db = drizzle({ client: new Database('app.db') });
 *   migrateSqlite(db);
 *   const guard = createGuard({ store: sqliteStore(db) });
 */

export { DEFAULT_TABLE_NAME } from '../store/table-name.js';
export type { SqliteDatabase } from './db.js';
export { type MigrateSqliteOptions, type MigrateSqliteResult, migrateSqlite } from './migrate.js';
export { type OpenSqliteOptions, openSqlite } from './open.js';
export { type SqliteStoreOptions, sqliteStore } from './store.js';
export {
  idempotencyRecords,
  type SqliteIdempotencyTable,
  sqliteIdempotencyTable,
} from './table.js';
