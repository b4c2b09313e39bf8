/**
 * The guarded transaction's life on any driver (SPEC S11, S15, S24): it never ends before its
 * work does, and nothing is sent through a transaction the driver has given up on.
 *
 * Why: postgres.js's `sql.begin()` rejects as soon as its connection closes (a terminated
 * backend, `idle_in_transaction_session_timeout`, a cut link), while the callback, the
 * guarded work, still runs (3: a race with the connection's `onclose`; 4: index.js
 * `transaction()` rejects on `lease.closed`). Settling then would let the guard answer 503
 * and free the key while the work goes on: a retry would run alongside it. And on
 * postgres.js 3 whatever the work (or the store's record (`_finish`), or postgres.js itself
 * with its COMMIT or ROLLBACK) sends later goes to a connection whose socket is gone, and
 * postgres.js throws a TypeError from a timer, which kills the process. postgres.js 4
 * rejects such statements with the close error and sends no ROLLBACK or COMMIT on a closed
 * connection (index.js `scope()`), so there this is about S11 only. node-postgres waits for
 * its callback and fails statements on a dead client by itself; PGlite has no connection to
 * lose.
 *
 * So:
 * - the promise returned here settles only once the work has settled;
 * - every statement through the handle (and through nested `tx.transaction` savepoints) is
 *   refused with a store error once the driver has ended the transaction or a statement saw
 *   the connection go;
 * - when the driver ended the transaction before the work was over, the callback handed to
 *   the driver is abandoned: it never settles, so the driver sends no COMMIT or ROLLBACK on
 *   the dead connection (the server rolled back when the connection died; the pending
 *   callback is garbage once nothing refers to it). The caller gets the driver's error.
 *   (postgres.js 4 would send neither anyway; abandoning costs it nothing: its lease was
 *   released when `begin` rejected.)
 * - once a statement saw the connection go, on postgres.js nothing is handed back to the
 *   driver until it has ended the transaction itself (bounded: `CLOSE_WAIT_MS`). On
 *   postgres.js 3 a reset (ECONNRESET) reaches the statement from the socket's 'error'
 *   event, and postgres.js ends the transaction only on its 'close' event, which Node emits
 *   later in the same event-loop turn, after setImmediate callbacks. Were the work's error
 *   handed back in between, postgres.js would write its ROLLBACK there; postgres.js 3.4.9
 *   buffers such a write behind a setImmediate that the close cancels without resetting,
 *   and never writes on that connection again: every later query that gets it, its
 *   reconnect's startup included, waits for `connect_timeout` (30 s) and fails, long after
 *   the database is back (S15). Upstream: porsager/postgres#1215 (its review describes this
 *   case). postgres.js 4 closes the connection from the 'error' event itself (socket.js):
 *   the statement fails with CONNECTION_CLOSED (the reset as its `cause`) and `begin`
 *   rejects in the same call, and nothing is written on a closed connection, so there the
 *   wait ends a few microtasks later.
 */
import { IdempotencyError } from '../core/errors.js';
import { redactStoreError } from '../core/redact.js';
import { isConnectionLoss } from './connection-errors.js';
import { type AnyPgDatabase, driverOf } from './db.js';

/** Starts a driver transaction and runs `callback` in it (`db.transaction`, or a savepoint). */
export type Begin = <T>(callback: (tx: AnyPgDatabase) => Promise<T>) => Promise<T>;

interface Life {
  /** The driver settled its transaction before we handed the work's outcome back. */
  driverEnded?: { error: unknown };
  /** Resolves when `driverEnded` is set. */
  ended: Promise<void>;
  /** A statement failed because the connection went away. */
  connectionLost?: unknown;
}

/**
 * How long, after a statement saw the connection go, to wait for postgres.js to end the
 * transaction before handing back anyway. Its close comes within the same event-loop turn
 * (postgres.js 4: with the failure itself); the bound only keeps a driver that never closes
 * from holding the outcome forever.
 */
const CLOSE_WAIT_MS = 1000;

export function runTransaction<T>(
  begin: Begin,
  work: (tx: AnyPgDatabase) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let driverHasEnded!: () => void;
    const life: Life = { ended: new Promise((done) => (driverHasEnded = done)) };
    const endEarly = (error: unknown) => {
      life.driverEnded = { error };
      driverHasEnded();
    };
    let started = false;
    let handedBack = false;

    const driver = begin<T>(async (tx) => {
      started = true;
      fenceHandle(tx, life);
      let outcome: { value: T } | { error: unknown };
      try {
        outcome = { value: await work(tx) };
      } catch (error) {
        outcome = { error };
      }
      if (!life.driverEnded) await letTheDriverCatchUp(tx, life, outcome);
      if (life.driverEnded) {
        reject(life.driverEnded.error);
        return abandoned<T>();
      }
      handedBack = true;
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    });

    // Once the work has started, only the callback above settles the outcome early: it
    // waits for the work first.
    driver.then(
      (value) => {
        if (handedBack) resolve(value);
        else endEarly(new Error('The driver ended the transaction early.'));
      },
      (error: unknown) => {
        if (handedBack || !started) reject(error);
        else endEarly(error);
      },
    );
  });
}

/**
 * Before the outcome goes back to the driver: a failure may be the connection going, so let
 * its close reach the driver's promise (postgres.js rejects `begin` from the socket's close
 * handler) before we decide. One macrotask is enough when the close came first (postgres.js
 * then fails the statement from the same handler). On postgres.js 3, after a reset the
 * statement fails first, from the socket's 'error' event, and the close follows only after
 * this turn's setImmediate callbacks: on postgres.js, wait for the driver itself (see the
 * top of this file; on postgres.js 4 the close comes with the failure).
 * node-postgres never ends a transaction before its callback settles, and PGlite has no
 * connection to lose: waiting for them would only delay the answer.
 */
async function letTheDriverCatchUp(
  tx: AnyPgDatabase,
  life: Life,
  outcome: { value: unknown } | { error: unknown },
): Promise<void> {
  const lost =
    life.connectionLost !== undefined || ('error' in outcome && isConnectionLoss(outcome.error));
  if (lost && driverOf(tx) === 'postgres.js') await settledWithin(life.ended, CLOSE_WAIT_MS);
  else if ('error' in outcome) await nextMacrotask();
}

/**
 * Refuses every statement through `tx` once the transaction is over for the driver, and
 * notes a statement that failed because the connection went. Instance properties shadow
 * the prototype's, so only this transaction's handle is affected.
 */
function fenceHandle(tx: AnyPgDatabase, life: Life): void {
  const session = tx._.session as unknown as {
    prepareQuery: (...args: unknown[]) => Record<'execute' | 'all', (...a: unknown[]) => unknown>;
  };
  const guarded = (send: () => unknown): Promise<unknown> => {
    if (life.driverEnded || life.connectionLost !== undefined) {
      return Promise.reject(transactionEnded(life.connectionLost ?? life.driverEnded?.error));
    }
    return Promise.resolve(send()).catch((error: unknown) => {
      if (isConnectionLoss(error)) life.connectionLost ??= error;
      throw error;
    });
  };
  const prepareQuery = session.prepareQuery.bind(session);
  session.prepareQuery = (...args) => {
    const prepared = prepareQuery(...args);
    for (const method of ['execute', 'all'] as const) {
      const send = prepared[method].bind(prepared);
      prepared[method] = (...values) => guarded(() => send(...values));
    }
    return prepared;
  };
  const handle = tx as unknown as {
    transaction: (
      callback: (inner: AnyPgDatabase) => Promise<unknown>,
      config?: unknown,
    ) => unknown;
  };
  const savepoint = handle.transaction.bind(tx);
  handle.transaction = (callback, config) =>
    guarded(() =>
      savepoint((inner) => {
        fenceHandle(inner, life);
        return callback(inner);
      }, config),
    );
}

/**
 * The store's answer to a statement it will not send. Its cause is the driver's failure,
 * redacted as every store failure the guard hands on is (SPEC S26): Drizzle's message of the
 * failed statement lists its parameters (the key among them), and the work may rethrow this.
 */
function transactionEnded(cause: unknown): IdempotencyError {
  return new IdempotencyError(
    'IDEMPOTENCY_STORE_UNAVAILABLE',
    'mutation-guard/postgres: the database ended this transaction (its connection was lost); the statement was not sent, and nothing of the transaction commits.',
    { cause: redactStoreError(cause, []) },
  );
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves when `done` does, or after `ms` at the latest. */
async function settledWithin(done: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise that never settles: the driver's callback, given up with its transaction. */
function abandoned<T>(): Promise<T> {
  return new Promise<T>(() => {});
}
