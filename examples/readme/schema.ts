// Your Drizzle schema file (the one drizzle.config.ts points at): re-export the table so
// that `drizzle-kit generate` writes its migration next to your own tables.
export { idempotencyRecords } from 'mutation-guard/postgres';
// Or under another name: export const idempotency = pgIdempotencyTable('idempotency_keys');
// and pass the same table to postgresStore(db, { table: idempotency }).
