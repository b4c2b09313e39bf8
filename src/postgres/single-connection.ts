/**
 * PGlite: one connection for the whole database (SPEC S10).
 *
 * While a guarded transaction runs, it holds PGlite's only connection, so any other statement
 * waits for it to end. A concurrent duplicate of a running key would wait for the transaction
 * to end and then replay, where S10 promises 409 at once: held-keys.ts answers it from this
 * process, for the lease model's claims too. (A guarded call nested in guarded work, which
 * would wait for that connection forever, joins the outer transaction on every driver:
 * nesting.ts.)
 */
import { type AnyPgDatabase, driverOf } from './db.js';

/** True when `db` runs on PGlite (its Drizzle session), which has a single connection. */
export function isSingleConnection(db: AnyPgDatabase): boolean {
  return driverOf(db) === 'pglite';
}
