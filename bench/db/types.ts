/** What every benchmark needs from a database, so each case is written once for both. */
import type { IdempotencyStore } from '../../src/index.js';

export interface BenchDb<Tx = unknown> {
  id: 'sqlite' | 'postgres';
  /** For tables and the chart. */
  label: string;
  store: IdempotencyStore<Tx>;
  /** The business write, unguarded: one row, autocommit. Resolves to the new row's id. */
  insert(amount: number): Promise<number>;
  /** The same write through the guard's transaction handle. */
  insertTx(tx: Tx, amount: number): Promise<number>;
  /** The same write in a transaction of its own (BEGIN, INSERT, COMMIT), no guard. */
  insertInTransaction(amount: number): Promise<number>;
  /**
   * The same write with a fresh design's statements around it, no guard and no store code,
   * resolving to the row's id: the framework cases measure a fresh call's floor with it.
   * SQLite: "record written last" (bench/designs.ts), the least a stored result costs beside
   * the write; Postgres: the shipped one-transaction statements in three round trips, the
   * same as `freshDesign`.
   */
  insertWithRecord?(amount: number, key: string): Promise<number>;
  /**
   * A fresh call's design floor, timed in the same rounds as the guarded calls (the goals
   * check the core's fresh call against it): the same insert with a fresh design's statements
   * around it, sent raw, no library code between them. SQLite: "record written last"
   * (`insertWithRecord`), the cheapest design that stores the result with the write; Postgres:
   * the shipped one-transaction statements in three round trips, as the store sends them on a
   * node-postgres Pool, so what the store and the guard add is read off against them
   * (bench/designs.ts measures every design, in rounds of its own).
   */
  freshDesign(key: string): Promise<unknown>;
  /**
   * A replay's design floor, where a goal bounds the core's replay (Postgres), timed in the
   * same rounds as `core.replay`: the shipped replay's statements on `key`'s complete record,
   * sent raw (BEGIN with `_begin` and the savepoint, answered after that one round trip, the
   * ROLLBACK after the answer, as the store sends them on a node-postgres Pool).
   */
  replayDesign?(key: string): Promise<unknown>;
  /**
   * Runs `work` where the store runs a guarded call's work besides its transaction: on SQLite
   * in an AsyncLocalStorage frame, so that a guarded call nested in the work joins its
   * transaction instead of waiting for it (SPEC S23, src/sqlite/lock.ts); on Postgres (a
   * node-postgres Pool) as it is. The fresh floor through the least adapter (bench/apps) runs
   * its mutation in it too, and bench/profile.ts its in-context cases.
   */
  workContext<T>(work: () => Promise<T>): Promise<T>;
  /** One database round trip on the raw driver (`SELECT 1`), to read the other times by. */
  roundTrip(): Promise<unknown>;
  /** The same `SELECT 1` through Drizzle, to show what the ORM adds per statement. */
  roundTripDrizzle(): Promise<unknown>;
  close(): Promise<void>;
}
