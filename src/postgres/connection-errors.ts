/**
 * node-postgres keeps an 'error' listener only on a pool's idle clients. A client checked
 * out for a transaction has none, so if its connection drops while the transaction waits
 * between statements (a guarded mutation awaiting its card processor, say), the client emits
 * 'error' with nobody listening and the whole process dies of an uncaught exception.
 *
 * A guarded transaction holds its client across the work's awaits by design, so the store
 * gives that client a listener. The error is not lost: the client is then unusable, the
 * transaction's next statement (or its COMMIT) fails, and the guard answers 503 (S15).
 * postgres.js and PGlite report such failures through their queries, not as events; their
 * handles are left alone.
 */
import { EventEmitter } from 'node:events';

const absorbing = new WeakSet<EventEmitter>();

function ignore(): void {
  // The failure reaches the transaction through its next statement.
}

/** Gives the connection under a Drizzle transaction handle an 'error' listener, once. */
export function absorbConnectionErrors(tx: unknown): void {
  const client = (tx as { _?: { session?: { client?: unknown } } })._?.session?.client;
  if (!(client instanceof EventEmitter) || absorbing.has(client)) return;
  client.on('error', ignore);
  absorbing.add(client);
}
