/**
 * The Postgres table of idempotency records (SPEC S22). Exported so that users can re-export
 * it from their own Drizzle schema and let drizzle-kit generate the migration; the package
 * also ships the generated migration (drizzle/postgres) and `migratePostgres` to apply it.
 * A row is a complete record: a key in flight has none, only its transaction's lock (S11).
 *
 * drizzle-kit loads this file directly (drizzle.config.ts) to generate drizzle/postgres: keep
 * its imports to drizzle-orm, ../store/table-name.ts and ./schema-name.ts, which import nothing.
 */
import {
  getTableConfig,
  index,
  type PgTableFn,
  pgSchema,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { assertTableName, DEFAULT_TABLE_NAME } from '../store/table-name.js';
import { assertSchemaName, DEFAULT_SCHEMA } from './schema-name.js';

export interface PgIdempotencyTableOptions {
  /**
   * The schema the table lives in (one per tenant, say). Pass the same schema to
   * `migratePostgres` or `postgresFunctionsSql`, which create the table's functions there.
   * @default 'public'
   */
  schema?: string;
}

/**
 * Builds the records table under `name`. Constraint and index names are derived from the
 * table name so that several tables (one per app, one per test suite) never collide.
 */
export function pgIdempotencyTable(
  name: string = DEFAULT_TABLE_NAME,
  { schema = DEFAULT_SCHEMA }: PgIdempotencyTableOptions = {},
) {
  assertTableName(name);
  assertSchemaName(schema);
  // Drizzle refuses `pgSchema('public')`: a table without a schema is public's.
  const table: PgTableFn<string | undefined> =
    schema === DEFAULT_SCHEMA ? pgTable : pgSchema(schema).table;
  return table(
    name,
    {
      scope: text('scope').notNull(),
      key: text('key').notNull(),
      fingerprint: text('fingerprint').notNull(),
      operation: text('operation').notNull(),
      outcome: text('outcome', { enum: ['committed', 'rolled_back'] }).notNull(),
      /** The serialized result. */
      result: text('result').notNull(),
      expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
      createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' })
        .notNull()
        .defaultNow(),
      completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }).notNull(),
    },
    (t) => [
      // Unique on (scope, key), never key alone (S4); the record's ON CONFLICT targets it (S7).
      primaryKey({ name: `${name}_scope_key_pk`, columns: [t.scope, t.key] }),
      // purge() scans by expiry (S14).
      index(`${name}_expires_at_idx`).on(t.expiresAt),
    ],
  );
}

/** The type of a records table built by `pgIdempotencyTable`. */
export type PgIdempotencyTable = ReturnType<typeof pgIdempotencyTable>;

/** Where a records table lives: its schema (public when built without one) and its name. */
export function placeOf(table: PgIdempotencyTable): { schema: string; name: string } {
  const { schema, name } = getTableConfig(table);
  return { schema: schema ?? DEFAULT_SCHEMA, name };
}

/** The records table under its default name, `idempotency_records`. */
export const idempotencyRecords = pgIdempotencyTable();
