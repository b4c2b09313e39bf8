/**
 * When a statement of the store's own fails because the database is not set up as the store
 * needs (the records table, one of its columns or a schema missing, or the role lacking the
 * right to use them), a `StoreSetupError` that says so and names the fix. The guard still
 * answers 503 (SPEC S15) and tells the operator once (`onSetupError`). A missing function of
 * the table's has its own, more precise message (functions.ts).
 *
 * Only errors of the store's own statements come here, never the work's: a missing table of
 * the app's is the app's error, not the store's.
 */
import { StoreSetupError } from '../store/setup-error.js';
import { causeChain, codeOf } from './error-chain.js';

/** The SQLSTATEs that mean the database lacks something the store needs. */
const SETUP_STATES: Record<string, string> = {
  '42P01': 'a table it uses does not exist', // undefined_table
  '42703': 'a column it uses does not exist', // undefined_column
  '42883': 'a function it calls does not exist', // undefined_function
  '3F000': 'a schema it uses does not exist', // invalid_schema_name
  '42501': 'the database role lacks a privilege it needs', // insufficient_privilege
};

/** `error` explained as a `StoreSetupError` when its SQLSTATE says so; otherwise `error`. */
export function explainSetupError(error: unknown, table: string): unknown {
  for (const link of causeChain(error)) {
    const code = codeOf(link);
    if (typeof code !== 'string' || !(code in SETUP_STATES)) continue;
    const said = link instanceof Error ? `: ${link.message}` : '';
    return new StoreSetupError(
      `mutation-guard/postgres: the records table "${table}" is not set up as the store needs: ${SETUP_STATES[code]} (SQLSTATE ${code}${said}). Run migratePostgres(db, { table: '${table}' }), or the migrations drizzle-kit generated from the re-exported table plus the store's functions (postgresFunctionsSql; docs/migrations.md), as a role that may use the table and its functions.`,
      { cause: error },
    );
  }
  return error;
}
