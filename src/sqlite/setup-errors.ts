/**
 * When the store's statements cannot be prepared because the records table, or a column of
 * it, is missing, a `StoreSetupError` that says so and names the fix (the Postgres twin is
 * postgres/setup-errors.ts). The guard still answers 503 (SPEC S15) and tells the operator
 * once (`onSetupError`).
 */
import { StoreSetupError } from '../store/setup-error.js';

/** What SQLite says when a statement names a table or column the database lacks. */
const MISSING = /no such table|no such column|has no column named/;

/** `error` explained as a `StoreSetupError` when it says the table is missing or short. */
export function explainSetupError(error: unknown, table: string): unknown {
  if (!(error instanceof Error) || !MISSING.test(error.message)) return error;
  return new StoreSetupError(
    `mutation-guard/sqlite: the records table "${table}" is not set up as the store needs (${error.message}). Create it with migrateSqlite(db, { table: '${table}' }) (openSqlite does it for you), or with the migration drizzle-kit generates from the re-exported table (docs/migrations.md).`,
    { cause: error },
  );
}
