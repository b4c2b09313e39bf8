/**
 * PGlite: one connection for the whole database (SPEC S10, S24).
 *
 * While a guarded transaction runs, it holds PGlite's only connection, so any other
 * statement waits for it to end. Two consequences:
 * - a guarded call nested in guarded work would wait for the connection its own outer
 *   transaction holds, forever (and so would every later statement). Instead it joins the
 *   outer transaction: its claim, read and release run there, and its own transaction is a
 *   savepoint in it (as the SQLite store does). It commits or rolls back with the outer one.
 * - a concurrent duplicate of a running key would wait for the transaction to end and then
 *   replay, where S10 promises 409 at once: held-keys.ts answers it from this process.
 *
 * Multi-connection drivers need neither for this reason: the claim runs on another connection.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type AnyPgDatabase, driverOf } from './db.js';

/** True when `db` runs on PGlite (its Drizzle session), which has a single connection. */
export function isSingleConnection(db: AnyPgDatabase): boolean {
  return driverOf(db) === 'pglite';
}

/** One per process: an AsyncLocalStorage per store would slow every await (see sqlite/lock). */
const running = new AsyncLocalStorage<{ client: unknown; tx: AnyPgDatabase }>();

export interface SingleConnection {
  /** The transaction of the guarded work we are inside, on this database, if any. */
  outerTransaction(): AnyPgDatabase | undefined;
  /** Runs `work` as the guarded work of `tx`: nested calls join it. */
  inside<T>(tx: AnyPgDatabase, work: () => Promise<T>): Promise<T>;
}

export function singleConnection(db: AnyPgDatabase): SingleConnection {
  const client = (db as { $client?: object }).$client ?? db;
  return {
    outerTransaction() {
      const current = running.getStore();
      return current?.client === client ? current.tx : undefined;
    },
    inside(tx, work) {
      return running.run({ client, tx }, work);
    },
  };
}
