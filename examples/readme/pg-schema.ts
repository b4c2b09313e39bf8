// Your Drizzle schema file, with the table in a Postgres schema of its own: export that
// schema too, so that `drizzle-kit generate` creates it before the table.
import { pgSchema } from 'drizzle-orm/pg-core';
import { pgIdempotencyTable } from 'mutation-guard/postgres';

export const billing = pgSchema('billing');
export const idempotencyRecords = pgIdempotencyTable('idempotency_records', { schema: 'billing' });
// Then postgresStore(db, { table: idempotencyRecords }), and the store's functions from
// postgresFunctionsSql({ schema: 'billing' }).
