import { drizzle } from 'drizzle-orm/node-postgres';
import { createGuard } from 'mutation-guard';
import { migratePostgres, postgresStore } from 'mutation-guard/postgres';
import pg from 'pg';

export async function createPostgresGuard(connectionString: string) {
  const pool = new pg.Pool({ connectionString });
  // As node-postgres advises: an idle client's lost connection must not crash the process.
  // (A client inside a guarded transaction is covered by the store: that mutation gets 503.)
  pool.on('error', (error) => console.error('postgres pool:', error.message));
  const db = drizzle({ client: pool });
  // Quick start: creates the idempotency table (safe to run from many processes at once).
  // In production, re-export `idempotencyRecords` from your Drizzle schema and let
  // drizzle-kit generate the migration with your own.
  await migratePostgres(db);
  const guard = createGuard({
    store: postgresStore(db),
    retention: 24 * 60 * 60 * 1000, // replay answers for a day (the default)
  });
  return { guard, close: () => pool.end() };
}
