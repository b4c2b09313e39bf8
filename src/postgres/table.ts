/**
 * The Postgres table of idempotency records (SPEC S22). Exported so that users can re-export
 * it from their own Drizzle schema and let drizzle-kit generate the migration; the package
 * also ships the generated migration (drizzle/postgres) and `migratePostgres` to apply it.
 */
import { index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** The default table name; `migratePostgres` rewrites it (and the names derived from it). */
export const DEFAULT_TABLE_NAME = 'idempotency_records';

/**
 * Table names are spliced into SQL (migrations, raw statements) and derived names such as
 * `<name>_expires_at_idx` must stay within Postgres's 63-byte identifier limit, where longer
 * names are silently truncated and could collide. So: a plain identifier of at most 48 chars.
 */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** Throws a TypeError unless `name` is a usable records table name. */
export function assertTableName(name: string): void {
  if (!TABLE_NAME.test(name)) {
    throw new TypeError(
      `mutation-guard/postgres: table name ${JSON.stringify(name)} must be 1-48 letters, digits or underscores, not starting with a digit.`,
    );
  }
}

/**
 * Builds the records table under `name`. Constraint and index names are derived from the
 * table name so that several tables (one per app, one per test suite) never collide.
 */
export function pgIdempotencyTable(name: string = DEFAULT_TABLE_NAME) {
  assertTableName(name);
  return pgTable(
    name,
    {
      scope: text('scope').notNull(),
      key: text('key').notNull(),
      fingerprint: text('fingerprint').notNull(),
      operation: text('operation').notNull(),
      state: text('state', { enum: ['in_flight', 'complete'] }).notNull(),
      /** The random lease token that fences complete/release (S8). */
      token: text('token'),
      outcome: text('outcome', { enum: ['committed', 'rolled_back'] }),
      /** The serialized result, set when complete. */
      result: text('result'),
      leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, mode: 'date' }),
      expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
      createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' })
        .notNull()
        .defaultNow(),
      completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    },
    (t) => [
      // Unique on (scope, key), never key alone (S4); the claim's ON CONFLICT targets it (S7).
      primaryKey({ name: `${name}_scope_key_pk`, columns: [t.scope, t.key] }),
      // purge() scans by expiry (S14).
      index(`${name}_expires_at_idx`).on(t.expiresAt),
    ],
  );
}

/** The type of a records table built by `pgIdempotencyTable`. */
export type PgIdempotencyTable = ReturnType<typeof pgIdempotencyTable>;

/** The records table under its default name, `idempotency_records`. */
export const idempotencyRecords = pgIdempotencyTable();
