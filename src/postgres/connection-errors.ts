/**
 * A lost connection, from both sides: how it is recognised (`isConnectionLoss`,
 * `isConnectionTerminated`, below), and the listeners that keep it from crashing the process.
 *
 * node-postgres keeps an 'error' listener only on a pool's idle clients. A client checked
 * out for a transaction has none, so if its connection drops while it is checked out (a
 * guarded mutation awaiting its card processor, say, or the transaction's BEGIN), the client
 * emits 'error' with nobody listening and the whole process dies of an uncaught exception.
 *
 * A guarded transaction holds its client across the work's awaits by design, so the store
 * gives the pool's clients a listener: every client the pool connects from now on, and the
 * client under each guarded transaction (for clients connected before the store existed,
 * and for a plain `pg.Client`). The error is not lost: the client is then unusable, its next
 * statement fails, and the guard answers 503 (S15); pg-pool drops the broken client when it
 * is released. postgres.js and PGlite report such failures through their queries, not as
 * events; their handles are left alone.
 */
import { EventEmitter } from 'node:events';
import { causeChain } from './error-chain.js';

const absorbing = new WeakSet<EventEmitter>();

function ignore(): void {
  // The failure reaches its caller through the client's next statement.
}

/** Gives one node-postgres client an 'error' listener, once. */
export function absorb(client: unknown): void {
  if (!(client instanceof EventEmitter) || absorbing.has(client)) return;
  client.on('error', ignore);
  absorbing.add(client);
}

/** Gives the connection under a Drizzle transaction handle an 'error' listener, once. */
export function absorbConnectionErrors(tx: unknown): void {
  absorb((tx as { _?: { session?: { client?: unknown } } })._?.session?.client);
}

/** For a Drizzle database on a node-postgres Pool: every client it connects gets one too. */
export function absorbPoolConnectionErrors(db: unknown): void {
  const pool = (db as { $client?: unknown }).$client;
  // A pg-pool Pool: an EventEmitter with `connect()` that counts its clients.
  if (!(pool instanceof EventEmitter) || !('totalCount' in pool) || absorbing.has(pool)) return;
  pool.on('connect', absorb);
  absorbing.add(pool);
}

/**
 * Errors that mean the connection is gone: postgres.js's own codes, SQLSTATE class 08
 * (connection exception), 57P01-57P03 (terminated by an operator, crash, shutdown), 25P03
 * (idle_in_transaction_session_timeout), and the socket's own errors, which postgres.js 3
 * passes on as they are (a reset, a broken pipe, a keepalive timeout, an unreachable
 * network). postgres.js 4 fails the statements on a lost connection with the server's FATAL
 * error when one came (57P01, say), else with CONNECTION_CLOSED, the socket's error as its
 * `cause`. Drizzle wraps the driver's error as `cause`.
 *
 * Not here, on purpose, postgres.js 4's other codes: UNSAFE_TRANSACTION (a statement sent
 * after its transaction ended; transaction.ts refuses those first), TRANSACTION_ROLLED_BACK
 * (a COMMIT the server answered with ROLLBACK), QUEUE_TIMEOUT, and what a pool that cannot
 * connect answers at once (a copy of its last connection error): none of them ends a
 * transaction that runs, and those before a transaction's callback fail the call as they
 * are (503, S15).
 */
export function isConnectionLoss(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' && CONNECTION_LOSS.test(code);
  });
}
const CONNECTION_LOSS =
  /^(CONNECTION_(CLOSED|DESTROYED|ENDED)|08...|57P0[123]|25P03|E(CONNRESET|PIPE|TIMEDOUT|CONNABORTED|NETUNREACH|HOSTUNREACH|NETDOWN|HOSTDOWN))$/;

/**
 * node-postgres reports a client whose socket died without a code, only in its message
 * ("Connection terminated", "... is not queryable"): for giving such a client back to its
 * pool as broken.
 */
export function isConnectionTerminated(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const message = (e as { message?: unknown }).message;
    return typeof message === 'string' && /Connection terminated|not queryable/i.test(message);
  });
}
