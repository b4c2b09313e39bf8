/**
 * Guarded calls nested in guarded work (SPEC S24): on every driver, a nested call joins the
 * transaction of the work it is called from.
 *
 * Why not a transaction of its own: it would need a second connection while the outer
 * transaction holds one. PGlite has only one, so it would wait forever. On a pool it waits
 * for a free connection, and when every connection is held by an outer call waiting for its
 * own nested call (three at once on a pool of three), none ever comes: node-postgres's Pool
 * and postgres.js wait without limit, and the outer calls hold their keys all the while.
 *
 * So the store runs a nested call's claim, work and record in a savepoint of the outer
 * transaction (store.ts), and it is part of the outer work:
 * - its record commits with the outer work, or rolls back with it: a failure that leaves the
 *   outer work undoes both, and a retry runs both afresh;
 * - a failure the outer work catches rolls back to the savepoint: the nested writes and the
 *   nested key's locks go, the key is free again, and the outer work goes on;
 * - a replay, 409 or 422 rolls back to the savepoint too, as a top-level call ends its
 *   transaction with nothing written; the same nested key again in the same outer work finds
 *   the record the first call wrote (its own transaction sees it): a replay, or 422;
 * - the primary key still decides who commits (S7, S8): the nested `_finish` inserts its
 *   record, and a row committed for that key meanwhile makes it roll back.
 *
 * The work's frame is an AsyncLocalStorage entry per database client (the Pool, the
 * postgres.js instance, the PGlite instance), so a guarded call on another database keeps its
 * own transaction. Calls nested in one work share its connection and its savepoint stack, so
 * they run one at a time, in the order they were made; a call nested in a nested call joins
 * that one's savepoint.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AnyPgDatabase } from './db.js';

/** The transaction of guarded work that runs now, and the queue of calls nested in it. */
export interface Outer {
  readonly tx: AnyPgDatabase;
  /** Runs `call` once every call nested before it in the same work has settled. */
  queue<T>(call: () => Promise<T>): Promise<T>;
}

interface Frame extends Outer {
  readonly parent: Frame | undefined;
  /** False once its work has settled: anything still running from it joins the parent. */
  open: boolean;
}

/**
 * One AsyncLocalStorage for every Postgres store of the process, mapping each client to the
 * innermost frame on it. While enabled it makes every promise in the process slower on Node
 * 20 and 22 (promise hooks), so it is disabled whenever no frame is open, as the SQLite lock
 * does with its own (sqlite/lock.ts).
 */
const frames = new AsyncLocalStorage<ReadonlyMap<object, Frame>>();

/** Frames open across every client in the process. */
let openFrames = 0;

export interface Nesting {
  /** The guarded work we are inside on this database, if any: a call now joins it. */
  outer(): Outer | undefined;
  /** Runs `work` as the guarded work of `tx`: guarded calls it makes join `tx`. */
  inside<T>(tx: AnyPgDatabase, work: () => Promise<T>): Promise<T>;
}

export function nestingOn(db: AnyPgDatabase): Nesting {
  // Every Drizzle database over one client shares its connections, so it shares its frames.
  const client = (db as { $client?: object }).$client ?? db;
  const current = (): Frame | undefined => {
    if (openFrames === 0) return undefined;
    let frame = frames.getStore()?.get(client);
    while (frame && !frame.open) frame = frame.parent;
    return frame;
  };
  return {
    outer: current,
    async inside(tx, work) {
      const frame = newFrame(tx, current());
      openFrames++;
      try {
        return await frames.run(new Map(frames.getStore()).set(client, frame), work);
      } finally {
        frame.open = false;
        if (--openFrames === 0) frames.disable();
      }
    },
  };
}

/**
 * A nested call's replay, 409 or 422, thrown out of its savepoint so that the savepoint rolls
 * back, and the locks `_begin` took in it with it (a top-level call ends its transaction
 * then); `answerOf` turns it back into the answer.
 */
export class SavepointAnswer<T> extends Error {
  constructor(readonly answer: T) {
    super('a nested guarded call was answered without running');
  }
}

/** The answer a `SavepointAnswer` carries; any other error goes on. */
export function answerOf<T>(error: unknown): T {
  if (error instanceof SavepointAnswer) return error.answer as T;
  throw error;
}

function newFrame(tx: AnyPgDatabase, parent: Frame | undefined): Frame {
  /** Settles when the last queued call has; one call's failure is its caller's alone. */
  let tail: Promise<unknown> = Promise.resolve();
  return {
    tx,
    parent,
    open: true,
    queue(call) {
      const result = tail.then(call);
      tail = result.catch(() => undefined);
      return result;
    },
  };
}
