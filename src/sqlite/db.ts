/**
 * The database type the SQLite store works with, and its connection's one-time set-up
 * (SPEC S23). The Postgres twin is postgres/db.ts.
 */
import type { Database } from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';

/**
 * A Drizzle database on better-sqlite3, as `drizzle(...)` from `drizzle-orm/better-sqlite3`
 * returns it. It is also the transaction handle guarded work receives: on one connection,
 * whatever runs through it while the store's transaction is open is part of that transaction.
 */
export type SqliteDatabase<TSchema extends Record<string, unknown> = Record<string, never>> =
  BetterSQLite3Database<TSchema> & { $client: Database };

/**
 * WAL lets readers (other connections, the sqlite3 shell) read while a guarded transaction
 * writes; synchronous = NORMAL is the usual durable-enough setting with WAL. Neither applies
 * to an in-memory database. The busy timeout makes a write wait for another process's write
 * lock instead of failing at once.
 */
export function configureConnection(client: Database, busyTimeoutMs: number): void {
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError(
      `sqliteStore: \`busyTimeoutMs\` must be a whole number of milliseconds, got ${busyTimeoutMs}.`,
    );
  }
  client.pragma(`busy_timeout = ${busyTimeoutMs}`);
  if (!client.memory) {
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = NORMAL');
  }
}

/**
 * A factory of one `T` per connection, made on first use and shared by every store on that
 * connection (two tables, one connection); weak, so a closed connection's can go.
 */
export function perConnection<T>(create: () => T): (client: object) => T {
  const made = new WeakMap<object, T>();
  return (client) => {
    let value = made.get(client);
    if (value === undefined) {
      value = create();
      made.set(client, value);
    }
    return value;
  };
}
