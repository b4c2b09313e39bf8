/**
 * A transaction on a node-postgres Pool that always gives its client back.
 *
 * Drizzle's node-postgres `db.transaction` checks a client out of the pool and sends BEGIN
 * before its try/finally: when BEGIN fails (the client's connection died between checkout
 * and BEGIN, as in an outage or a network blip), the client is never released. Each such
 * failure takes one slot of the pool for good; after as many as the pool has, every guarded
 * mutation waits for a client until its timeout and answers 503 long after the database is
 * back (SPEC S15 asks for fail-closed, not for staying closed), and `pool.end()` never returns.
 *
 * So for a Pool the store checks the client out itself and runs Drizzle's transaction on a
 * session bound to that one client (Drizzle then neither checks out nor releases), and gives
 * the client back in its own `finally`: with the error when the transaction failed on a dead
 * connection, which makes the pool drop it instead of handing it out again. The client gets
 * its 'error' listener (connection-errors.ts) before BEGIN, not only once the callback runs.
 */
import { absorb, isConnectionLoss, isConnectionTerminated } from './connection-errors.js';
import type { AnyPgDatabase } from './db.js';

/** The parts of a pg-pool `Pool` and `PoolClient` used here. */
interface Pool {
  connect(): Promise<PoolClient>;
  totalCount: number;
}
interface PoolClient {
  release(error?: Error | boolean): void;
}
/** Drizzle's NodePgSession: its constructor and the fields a second one over a client needs. */
interface NodePgSession {
  constructor: new (
    client: PoolClient,
    dialect: unknown,
    schema: unknown,
    options: unknown,
  ) => NodePgSession;
  client: unknown;
  dialect: unknown;
  schema: unknown;
  options: unknown;
  transaction<T>(work: (tx: AnyPgDatabase) => Promise<T>, config?: unknown): Promise<T>;
}

/**
 * For a Drizzle database on a node-postgres Pool: a `db.transaction` replacement that always
 * releases its client. Undefined for any other database (postgres.js, PGlite, a pg.Client).
 */
export function poolTransaction(
  db: AnyPgDatabase,
): (<T>(work: (tx: AnyPgDatabase) => Promise<T>, config?: unknown) => Promise<T>) | undefined {
  const session = db._.session as unknown as NodePgSession;
  if (!isPool(session.client)) return undefined;
  const pool = session.client;
  return async function transactionOnOwnClient<T>(
    work: (tx: AnyPgDatabase) => Promise<T>,
    config?: unknown,
  ): Promise<T> {
    const client = await pool.connect();
    // Before BEGIN: a client the pool connected before the store existed has no listener yet,
    // and its connection dying under BEGIN would otherwise crash the process.
    absorb(client);
    const own = new session.constructor(client, session.dialect, session.schema, session.options);
    let lost: Error | undefined;
    try {
      return await own.transaction(work, config);
    } catch (error) {
      if (isConnectionLoss(error) || isConnectionTerminated(error)) {
        lost = error instanceof Error ? error : new Error(String(error));
      }
      throw error;
    } finally {
      client.release(lost);
    }
  };
}

function isPool(client: unknown): client is Pool {
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof (client as Pool).connect === 'function' &&
    'totalCount' in client
  );
}
