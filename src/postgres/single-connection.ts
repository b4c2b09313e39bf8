/**
 * PGlite: one connection for the whole database (SPEC S10, S24).
 *
 * While a guarded transaction runs, it holds PGlite's only connection, so any other
 * statement waits for it to end. Two consequences, each handled here:
 * - a guarded call nested in guarded work would wait for the connection its own outer
 *   transaction holds, forever (and so would every later statement). Instead it joins the
 *   outer transaction: its claim, read and release run there, and its own transaction is a
 *   savepoint in it (as the SQLite store does). It commits or rolls back with the outer one.
 * - a concurrent duplicate of a running key would wait for the transaction to end and then
 *   replay, where S10 promises 409 at once. The keys whose transactions are running are
 *   known in this process (no other process can open the same PGlite), so a claim of one of
 *   them is answered from here without a statement.
 *
 * Multi-connection drivers need neither: the claim runs on another connection.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RecordKey, StoredRecord } from '../store/seam.js';
import { type AnyPgDatabase, driverOf } from './db.js';

/** True when `db` runs on PGlite (its Drizzle session), which has a single connection. */
export function isSingleConnection(db: AnyPgDatabase): boolean {
  return driverOf(db) === 'pglite';
}

/** One per process: an AsyncLocalStorage per store would slow every await (see sqlite/lock). */
const running = new AsyncLocalStorage<{ client: unknown; tx: AnyPgDatabase }>();

/** A record whose transaction runs now, by (table, scope, key), per PGlite instance. */
const inFlight = new WeakMap<object, Map<string, StoredRecord>>();

export interface SingleConnection {
  /** The transaction of the guarded work we are inside, on this database, if any. */
  outerTransaction(): AnyPgDatabase | undefined;
  /** Runs `work` as the guarded work of `tx`: nested calls join it. */
  inside<T>(tx: AnyPgDatabase, work: () => Promise<T>): Promise<T>;
  /** The record of a key whose transaction runs now, as read now. */
  running(record: RecordKey): StoredRecord | undefined;
  /** Marks a key's transaction as running until `work` settles. */
  holding<T>(record: StoredRecord, work: () => Promise<T>): Promise<T>;
}

export function singleConnection(db: AnyPgDatabase, table: string): SingleConnection {
  const client = (db as { $client?: object }).$client ?? db;
  const held = inFlight.get(client) ?? new Map<string, StoredRecord>();
  inFlight.set(client, held);
  const id = ({ scope, key }: RecordKey) => JSON.stringify([table, scope, key]);
  return {
    outerTransaction() {
      const current = running.getStore();
      return current?.client === client ? current.tx : undefined;
    },
    inside(tx, work) {
      return running.run({ client, tx }, work);
    },
    running(record) {
      const now = held.get(id(record));
      return now && { ...now, readAt: new Date() };
    },
    async holding(record, work) {
      const name = id(record);
      // A nested call of the same key never gets here: its claim finds this entry (409).
      held.set(name, record);
      try {
        return await work();
      } finally {
        held.delete(name);
      }
    },
  };
}
