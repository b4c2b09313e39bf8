/**
 * Rolling back a SQLite transaction level after a failure, for both of the store's
 * transactions (the lease model's in store.ts, the one-transaction claim's in
 * one-transaction.ts).
 */
import type { Database } from 'better-sqlite3';

/**
 * Rolls back after a failure. The work's error is what the caller needs, so a failing
 * rollback (SQLite may already have rolled back on its own) must not replace it.
 */
export function undo(client: Database, savepoint: string | undefined): void {
  if (!client.inTransaction) return;
  try {
    if (savepoint) {
      client.exec(`ROLLBACK TO ${savepoint}`);
      client.exec(`RELEASE ${savepoint}`);
    } else {
      client.exec('ROLLBACK');
    }
  } catch {
    // Nothing better to do: the original error is rethrown by the caller.
  }
}
