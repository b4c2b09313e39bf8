/**
 * The Postgres bench's business table, as Drizzle sees it: the store's cases (postgres.ts) and
 * the designs' raw statements (design-statements.ts) both insert into it, so it lives apart
 * from either.
 */
import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core';

export function paymentsTable(name: string) {
  return pgTable(name, {
    id: serial('id').primaryKey(),
    amount: integer('amount').notNull(),
    note: text('note'),
  });
}
