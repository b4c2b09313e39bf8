/**
 * The database types the Postgres store works with, and driver-neutral helpers (the SQLite
 * twin is sqlite/db.ts). Only drizzle-orm's pg-core is imported (as types), never a
 * driver, so a postgres.js user does not need `pg` installed and vice versa.
 */
import { entityKind } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Any Drizzle Postgres database: node-postgres, postgres.js, PGlite, with or without a schema.
 * `any` for the schema parameters is deliberate: they are invariant, and the store never uses
 * the relational API, so any schema must be accepted.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type AnyPgDatabase = PgDatabase<PgQueryResultHKT, any, any>;

/** The transaction handle `db.transaction` passes to its callback, for the given database. */
export type PgTransactionOf<Db extends AnyPgDatabase> = Parameters<
  Parameters<Db['transaction']>[0]
>[0];

/**
 * The rows of a `db.execute(...)` result. Drivers differ: node-postgres and PGlite return
 * `{ rows }`, postgres.js returns the rows as an array.
 */
export function rowsOf<Row>(result: unknown): Row[] {
  if (Array.isArray(result)) return result as Row[];
  if (result !== null && typeof result === 'object') {
    const rows = (result as { rows?: unknown }).rows;
    if (Array.isArray(rows)) return rows as Row[];
  }
  throw new TypeError('mutation-guard/postgres: unrecognised result shape from db.execute().');
}

/** Which driver a Drizzle database runs on, by its session's Drizzle entity kind. */
export function driverOf(db: AnyPgDatabase): 'node-postgres' | 'postgres.js' | 'pglite' | 'other' {
  const session = db._.session as unknown as { constructor: { [entityKind]?: string } };
  switch (session.constructor[entityKind]) {
    case 'NodePgSession':
      return 'node-postgres';
    case 'PostgresJsSession':
      return 'postgres.js';
    case 'PgliteSession':
      return 'pglite';
    default:
      return 'other';
  }
}
