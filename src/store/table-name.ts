/**
 * The records table's name, one rule for both dialects (SPEC S22). Kept free of imports:
 * the dialects' table.ts files import it, and drizzle-kit loads those directly.
 */

/** The table name the shipped migrations use; `migrateSqlite` and `migratePostgres` rename it. */
export const DEFAULT_TABLE_NAME = 'idempotency_records';

/**
 * Table names are spliced into SQL (the stores' statements, the migrations, the Postgres
 * functions) and prefix derived names (`<name>_expires_at_idx`, `<name>_claim`,
 * `<name>_migrations`), so only plain identifiers are accepted, refused when the table is
 * built rather than at the first request (where a store could only answer 503). At most 48
 * characters: the longest derived name must fit Postgres's 63-byte identifier limit, past
 * which names are silently truncated and could collide. SQLite has no such limit, but one
 * rule lets the same name move between the dialects.
 */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** Throws a TypeError unless `name` is a usable records table name. */
export function assertTableName(name: string): void {
  if (typeof name !== 'string' || !TABLE_NAME.test(name)) {
    throw new TypeError(
      `mutation-guard: table name ${JSON.stringify(name)} must be 1-48 letters, digits or underscores, not starting with a digit.`,
    );
  }
}
