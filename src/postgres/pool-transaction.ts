/**
 * The guarded transaction on a node-postgres Pool: in as few round trips as node-postgres
 * allows, and always giving its client back.
 *
 * Round trips. node-postgres sends one statement per round trip, and Drizzle's
 * `db.transaction` sends BEGIN and COMMIT as statements of their own. Here the store's
 * statements ride on round trips the transaction makes anyway, as simple-protocol queries
 * of several statements. A simple-protocol query takes no parameters, so their values are
 * literals, escaped by node-postgres's own `escapeLiteral`. The work still gets a Drizzle
 * transaction (a `NodePgTransaction` over the client), as `db.transaction` would give it.
 *
 * `claimAndRun`: BEGIN with `_begin` and the work's savepoint, the work, `_finish` with COMMIT;
 * three round trips, as many as the unguarded mutation in a transaction. A replay, 409 or 422
 * is known after the first, and the empty transaction's ROLLBACK goes after the answer.
 *
 * The record must not let COMMIT happen when it was not written: its statement
 * (merged-completion.ts) then fails before COMMIT, the transaction rolls back, and the
 * caller gets `KeyTakenError` (SPEC S7, S8).
 *
 * The client. Drizzle's node-postgres `db.transaction` checks a client out of the pool and
 * sends BEGIN before its try/finally: when BEGIN fails (the client's connection died between
 * checkout and BEGIN, as in an outage or a network blip), the client is never released. Each
 * such failure takes one slot of the pool for good; after as many as the pool has, every
 * guarded mutation waits for a client until its timeout and answers 503 long after the
 * database is back (SPEC S15 asks for fail-closed, not for staying closed). So the client is
 * checked out and given back here, in a `finally`: with the error when the transaction failed
 * on a dead connection, which makes the pool drop it instead of handing it out again. It gets
 * its 'error' listener (connection-errors.ts) before BEGIN.
 */
import type { ClaimAndRunResult, ClaimRequest, WorkEnding } from '../store/seam.js';
import { KeyTakenError } from '../store/seam.js';
import { type BeginRow, beginAnswer, beginRowOf } from './begin-answer.js';
import { absorb, isConnectionLoss, isConnectionTerminated } from './connection-errors.js';
import type { AnyPgDatabase } from './db.js';
import { completingStatement, wroteNothing } from './merged-completion.js';
import { type MergedStatements, WORK_SAVEPOINT } from './statements.js';

/** The part of a pg-pool `Pool` used here. */
interface PgPool {
  connect(): Promise<unknown>;
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
  totalCount: number;
}

/** The parts of a pg-pool `PoolClient` used here. */
interface PoolClient {
  query(text: string): Promise<QueryResult | QueryResult[]>;
  escapeLiteral(value: string): string;
  release(error?: Error | boolean): void;
}
interface QueryResult {
  rows: unknown[];
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
}
/** Drizzle's NodePgTransaction, loaded only once a node-postgres Pool is in use. */
type NodePgTransaction = new (dialect: unknown, session: NodePgSession, schema: unknown) => unknown;

export interface PoolTransactions {
  /**
   * `IdempotencyStore.claimAndRun` in three round trips, as many
   * as the unguarded mutation: BEGIN, the claim and the work's savepoint as one query; the
   * work; the completion (after a rollback to the savepoint, for a kept error) with COMMIT.
   * A replay, 409 or 422 is answered after the first; the empty transaction's ROLLBACK goes
   * after the answer, and the client back to the pool once it is done.
   */
  claimAndRun<T>(
    request: ClaimRequest,
    work: (tx: AnyPgDatabase) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>>;
}

/** For a Drizzle database on a node-postgres Pool, its guarded transactions; else undefined. */
export function poolTransactions(
  db: AnyPgDatabase,
  statements: MergedStatements,
  /** What a failure of the store's own statements becomes (a missing function explained). */
  explain: (error: unknown) => unknown = (error) => error,
): PoolTransactions | undefined {
  const pool = nodePgPool(db);
  if (!pool) return undefined;
  const clients: PgPool = pool;
  const session = db._.session as unknown as NodePgSession;
  // Imported when first needed: `drizzle-orm/node-postgres` imports `pg`, which a postgres.js
  // or PGlite user need not have (and here, with a node-postgres Pool, is installed).
  let transactionClass: NodePgTransaction | undefined;
  const loadTransactionClass = async () => {
    transactionClass ??= (await import('drizzle-orm/node-postgres'))
      .NodePgTransaction as unknown as NodePgTransaction;
    return transactionClass;
  };

  /**
   * A client of the pool, with its 'error' listener; literals escaped as it escapes them; and
   * `handle()`, a Drizzle transaction handle over it for the work, made when the caller wants
   * it (the claim's query may go first).
   */
  async function checkOut() {
    const Transaction = transactionClass ?? (await loadTransactionClass());
    const client = (await clients.connect()) as PoolClient;
    // Before BEGIN: a client the pool connected before the store existed has no listener
    // yet, and its connection dying under BEGIN would otherwise crash the process.
    absorb(client);
    const literal = (value: string) => client.escapeLiteral(value);
    const handle = () => {
      const own = new session.constructor(client, session.dialect, session.schema, session.options);
      return new Transaction(session.dialect, own, session.schema) as AnyPgDatabase;
    };
    return { client, literal, handle };
  }

  return {
    async claimAndRun<T>(
      request: ClaimRequest,
      work: (tx: AnyPgDatabase) => Promise<WorkEnding<T>>,
    ): Promise<ClaimAndRunResult<T>> {
      const { client, literal, handle } = await checkOut();
      let lost: Error | undefined;
      let handedOver = false;
      try {
        const opening = inTransaction(
          client,
          `begin isolation level read committed; ${statements.begin(request, literal)}; savepoint ${WORK_SAVEPOINT}`,
        ).catch((error: unknown) => {
          throw explain(error);
        });
        // Made while the server answers (the query is on its way): not on the fresh call's
        // critical path, and for a replay only time the process would have waited anyway.
        let tx: AnyPgDatabase;
        try {
          tx = handle();
        } catch (error) {
          // The claim's transaction may be open by now: end it before handing the error on.
          await opening.then(
            () => rollBack(client),
            () => undefined,
          );
          throw error;
        }
        const opened = await opening;
        const found = Array.isArray(opened) ? opened[1] : undefined;
        if (!found) {
          await rollBack(client);
          throw new Error(
            'mutation-guard/postgres: BEGIN, the claim and the savepoint did not answer as three statements.',
          );
        }
        let row: BeginRow | undefined;
        let answer: ReturnType<typeof beginAnswer>;
        try {
          row = beginRowOf(found.rows[0]);
          answer = beginAnswer(request, row);
        } catch (error) {
          await rollBack(client);
          throw error;
        }
        if (answer) {
          // Nothing to commit: the answer goes now, the ROLLBACK after it, and the client
          // back to the pool once that is done (as broken, should the connection have gone).
          // Not later (after a `setImmediate`): measured against this, that made replays
          // slower, as the ROLLBACK then met the next statements at the server instead of
          // running while this process answers.
          handedOver = true;
          void rollBack(client).then((failure) => client.release(lostConnection(failure)));
          return answer;
        }
        let ending: WorkEnding<T>;
        try {
          ending = await work(tx);
        } catch (error) {
          // As Drizzle's `db.transaction` does: a ROLLBACK that fails is the error that counts.
          throw (await rollBack(client)) ?? error;
        }
        const { completion } = ending;
        const finish = statements.finish(
          { request, replace: row?.replace === true, completion },
          literal,
        );
        await inTransaction(
          client,
          `${completingStatement(finish, completion.outcome)}; commit`,
        ).catch((error: unknown) => {
          if (wroteNothing(error)) throw new KeyTakenError();
          throw explain(error);
        });
        return { status: 'done', value: ending.value };
      } catch (error) {
        lost = lostConnection(error);
        throw error;
      } finally {
        if (!handedOver) client.release(lost);
      }
    },
  };
}

/** Sends a query of the open transaction; when it fails, rolls back before handing the error on. */
async function inTransaction(
  client: PoolClient,
  text: string,
): Promise<QueryResult | QueryResult[]> {
  try {
    return await client.query(text);
  } catch (error) {
    await rollBack(client);
    throw error;
  }
}

/**
 * Ends the transaction without its work; resolves to the ROLLBACK's own failure, if it failed
 * (the connection is gone: the server ends that transaction itself, and the client is
 * released as broken). After a failed statement of ours that failure adds nothing, and the
 * callers above hand on the statement's error.
 */
async function rollBack(client: PoolClient): Promise<unknown> {
  try {
    await client.query('rollback');
    return undefined;
  } catch (error) {
    return error;
  }
}

/** `error` when it says the connection went (the client is then released as broken). */
function lostConnection(error: unknown): Error | undefined {
  if (!isConnectionLoss(error) && !isConnectionTerminated(error)) return undefined;
  return error instanceof Error ? error : new Error(String(error));
}

/** The node-postgres Pool under a Drizzle database, or undefined for any other client. */
function nodePgPool(db: AnyPgDatabase): PgPool | undefined {
  const client = (db._.session as unknown as { client?: unknown }).client;
  return isPool(client) ? client : undefined;
}

function isPool(client: unknown): client is PgPool {
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof (client as PgPool).connect === 'function' &&
    typeof (client as PgPool).query === 'function' &&
    'totalCount' in client
  );
}
