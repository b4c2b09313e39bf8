/**
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
