/**
 * Who may use the single SQLite connection right now (SPEC S23).
 *
 * A statement run on a better-sqlite3 connection while a transaction is open silently joins
 * that transaction: a claim made by request B while request A's transaction awaits would
 * commit or roll back with A. So every store operation queues on one lock per connection,
 * and a guarded transaction holds it until COMMIT/ROLLBACK, awaits of its work included.
 *
 * Code running inside that transaction (a guarded call nested in the work, a purge or read
 * the work makes) must not queue behind the transaction it is part of, or it would wait for
 * itself forever. An AsyncLocalStorage frame marks it: such operations queue on the
 * frame's own lock instead, and a nested transaction becomes a SAVEPOINT level.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { perConnection } from './db.js';
import { Mutex } from './mutex.js';

interface Frame {
  /** Serialises what runs directly at this level. */
  readonly mutex: Mutex;
  readonly parent: Frame | undefined;
  /** 0: outside any transaction; 1: the BEGIN IMMEDIATE level; 2+: savepoints. */
  readonly depth: number;
  /** False once its transaction ended: late work started inside it queues at the parent. */
  open: boolean;
}

export interface TransactionLevel {
  /** 1 for the outermost transaction (BEGIN), more for nested ones (SAVEPOINT). */
  depth: number;
  /** Runs `fn` as part of this transaction, so store calls inside it do not queue behind it. */
  enter<R>(fn: () => R): R;
}

/**
 * One AsyncLocalStorage for every lock in the process, holding each lock's current frame.
 * Not one per lock: on Node 20 an AsyncLocalStorage that has ever run stays registered with
 * async_hooks for the life of the process, so one per connection would make every promise
 * anywhere slower with each connection ever opened (test/reliability/connections.test.ts).
 *
 * Even the one makes every promise in the process slower while it is enabled (Node 20 and 22
 * run promise hooks for it: an `await` costs about three times as much), queries and
 * unguarded requests included. Only code inside a transaction needs it, so it is disabled
 * whenever no transaction of any lock is open, and `run()` enables it again for the next.
 */
const frames = new AsyncLocalStorage<ReadonlyMap<ConnectionLock, Frame>>();

/** Transaction levels open across every lock in the process (see `frames`). */
let openFrames = 0;

export class ConnectionLock {
  readonly #root: Frame = { mutex: new Mutex(), parent: undefined, depth: 0, open: true };
  /** Runs one operation alone on the connection (at the caller's transaction level). */
  run<T>(task: () => T): Promise<T> {
    return this.#current().mutex.run(task);
  }

  /** True when an operation run now would wait behind another (a transaction, say). */
  get busy(): boolean {
    return this.#current().mutex.busy;
  }

  /**
   * Takes the lock at the caller's level and runs `body` as a new transaction level, holding
   * the lock until `body` settles.
   */
  transaction<T>(body: (level: TransactionLevel) => Promise<T>): Promise<T> {
    const parent = this.#current();
    return parent.mutex.run(async () => {
      const frame: Frame = { mutex: new Mutex(), parent, depth: parent.depth + 1, open: true };
      openFrames++;
      try {
        return await body({
          depth: frame.depth,
          enter: (fn) => frames.run(new Map(frames.getStore()).set(this, frame), fn),
        });
      } finally {
        frame.open = false;
        // No frame is open anywhere: whatever still holds a stale one would walk up to a
        // root anyway (`#current`), which is what a disabled storage answers.
        if (--openFrames === 0) frames.disable();
      }
    });
  }

  #current(): Frame {
    let frame = frames.getStore()?.get(this) ?? this.#root;
    while (!frame.open && frame.parent) frame = frame.parent;
    return frame;
  }
}

/** One lock per connection, shared by every store on it. */
export const connectionLock = perConnection(() => new ConnectionLock());
