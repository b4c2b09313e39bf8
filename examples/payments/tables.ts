/**
 * The demo's own business table, once per dialect, as an app would declare it in its Drizzle
 * schema. The idempotency table is the package's (`migrateSqlite` / `migratePostgres`).
 *
 * The `CREATE TABLE IF NOT EXISTS` statements stand in for the app's drizzle-kit migration,
 * so that `npm start` works on a fresh checkout with nothing to generate first.
 */
import {
  index as pgIndex,
  integer as pgInteger,
  pgTable,
  text as pgText,
  timestamp,
} from 'drizzle-orm/pg-core';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const PAYMENTS_TABLE = 'payments';

export const sqlitePayments = sqliteTable(
  PAYMENTS_TABLE,
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    amount: integer('amount').notNull(),
    currency: text('currency').notNull(),
    customerId: text('customer_id').notNull(),
    // ISO 8601 text: SQLite has no timestamp type, and ISO strings sort by time.
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('payments_account_idx').on(t.accountId, t.createdAt)],
);

export const pgPayments = pgTable(
  PAYMENTS_TABLE,
  {
    id: pgText('id').primaryKey(),
    accountId: pgText('account_id').notNull(),
    amount: pgInteger('amount').notNull(),
    currency: pgText('currency').notNull(),
    customerId: pgText('customer_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [pgIndex('payments_account_idx').on(t.accountId, t.createdAt)],
);

export const CREATE_SQLITE_PAYMENTS = `
  CREATE TABLE IF NOT EXISTS ${PAYMENTS_TABLE} (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    currency TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS payments_account_idx ON ${PAYMENTS_TABLE} (account_id, created_at);
`;

export const CREATE_PG_PAYMENTS = [
  `CREATE TABLE IF NOT EXISTS ${PAYMENTS_TABLE} (
    id text PRIMARY KEY,
    account_id text NOT NULL,
    amount integer NOT NULL,
    currency text NOT NULL,
    customer_id text NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS payments_account_idx ON ${PAYMENTS_TABLE} (account_id, created_at)`,
];
