/**
 * The server-side functions a records table comes with (drizzle/postgres/0000_init.sql), and
 * the error that says what to do when they are missing: a table that drizzle-kit created from
 * the re-exported schema has none until the app adds the custom migration that
 * docs/migrations.md shows (drizzle-kit knows tables, not functions).
 */
import { StoreSetupError } from '../store/setup-error.js';
import { causeChain, codeOf } from './error-chain.js';
import { DEFAULT_SCHEMA } from './schema-name.js';
import { explainSetupError } from './setup-errors.js';

/**
 * The names of the server-side functions that belong to a records table. They live in the
 * table's schema; the statements that call them name it (schema-name.ts).
 */
export function functionNames(table: string) {
  return {
    begin: `${table}_begin`,
    finish: `${table}_finish`,
  };
}

/** SQLSTATE 42883, undefined_function. */
const UNDEFINED_FUNCTION = '42883';

/**
 * When `error` says one of the table's functions does not exist, a `StoreSetupError` that
 * names the table, the missing function and the fix (with the driver's error as `cause`);
 * else, when it says something else is missing, the one setup-errors.ts makes; otherwise
 * `error` itself. The guard still answers 503 (S15): a guarded mutation never runs unguarded.
 * A table kept in another schema than the store was told is missing its functions too, so the
 * message names the schema.
 */
export function explainMissingFunctions(error: unknown, schema: string, table: string): unknown {
  const names = Object.values(functionNames(table));
  for (const e of causeChain(error)) {
    if (!(e instanceof Error) || codeOf(e) !== UNDEFINED_FUNCTION) continue;
    const missing = names.find((name) => e.message.includes(name));
    if (!missing) continue;
    const options =
      schema === DEFAULT_SCHEMA
        ? `{ table: '${table}' }`
        : `{ table: '${table}', schema: '${schema}' }`;
    return new StoreSetupError(
      `mutation-guard/postgres: the records table "${table}" has no function "${missing}" in schema "${schema}". The store's statements call server-side functions that the package's migration creates with the table: run migratePostgres(db, ${options}), or, if drizzle-kit manages the table, add them as a custom migration (postgresFunctionsSql(${options}); docs/migrations.md, "The store's functions"). If the table is in another schema than "${schema}", pass that schema to postgresStore (docs/postgres.md, "A schema per tenant").`,
      { cause: error },
    );
  }
  return explainSetupError(error, table);
}
