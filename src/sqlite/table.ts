/**
 * The idempotency table for SQLite (SPEC S22). Users may re-export it from their own Drizzle
 * schema and let drizzle-kit generate the migration, or apply the shipped migration with
 * `migrateSqlite`. A row is a complete record: a key in flight has none (S11). Times are
 * integers in milliseconds since the epoch (Drizzle maps them to `Date`), so that comparisons
 * and the purge index work on plain integers.
 *
 * drizzle-kit loads this file directly (drizzle.sqlite.config.ts) to generate drizzle/sqlite:
 * keep its imports to drizzle-orm and ../store/table-name.ts, which imports nothing.
 */
import { sql } from 'drizzle-orm';
import { check, index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { assertTableName, DEFAULT_TABLE_NAME } from '../store/table-name.js';

/**
 * Builds the idempotency table under `name`. Index and constraint names are prefixed with the
 * table name, so two tables in one database never collide.
 * @param name The SQL table name. @default 'idempotency_records'
 */
export function sqliteIdempotencyTable(name: string = DEFAULT_TABLE_NAME) {
  assertTableName(name);
  return sqliteTable(
    name,
    {
      scope: text('scope').notNull(),
      key: text('key').notNull(),
      fingerprint: text('fingerprint').notNull(),
      operation: text('operation').notNull(),
      outcome: text('outcome', { enum: ['committed', 'rolled_back'] }).notNull(),
      /** The serialized result. */
      result: text('result').notNull(),
      expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
      createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
      completedAt: integer('completed_at', { mode: 'timestamp_ms' }).notNull(),
    },
    (t) => [
      // S4: unique on (scope, key), never on key alone; S7's INSERT ... ON CONFLICT targets it.
      primaryKey({ columns: [t.scope, t.key] }),
      // S14: purge finds expired rows through this index.
      index(`${name}_expires_at_idx`).on(t.expiresAt),
      check(`${name}_outcome_check`, sql`${t.outcome} in ('committed', 'rolled_back')`),
    ],
  );
}

/** A table built by `sqliteIdempotencyTable`, whatever its name. */
export type SqliteIdempotencyTable = ReturnType<typeof sqliteIdempotencyTable>;

/** The table under its default name, `idempotency_records`. */
export const idempotencyRecords = sqliteIdempotencyTable();
