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
 * `claimAndRun`, the one-transaction claim (what the guard uses): BEGIN with `_begin` and the
 * work's savepoint, the work, `_finish` with COMMIT; three round trips, as many as the
 * unguarded mutation in a transaction. A replay, 409 or 422 is known after the first, and the
 * empty transaction's ROLLBACK goes after the answer.
 *
 * `run` and `defer`, the lease model's transaction (for records an earlier version left in
 * flight, and for callers of the store's primitives): BEGIN with the lock, the work, the
 * fenced completion with COMMIT. The guard's fenced `complete` inside the transaction is
 * recorded here and told it held, which it must, because the lock taken at BEGIN keeps the
 * record ours until the transaction ends (SPEC S8, S11).
 *
 * Either completion must not let COMMIT happen when it wrote nothing: its statement
 * (merged-completion.ts) then fails before COMMIT, the transaction rolls back, and the
 * caller gets `LeaseLostError`.
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
import type {
  ClaimAndRunResult,
  ClaimRequest,
  CompletionRecord,
  Fence,
  WorkEnding,
} from '../store/seam.js';
import { LeaseLostError } from '../store/seam.js';
import { absorb, isConnectionLoss, isConnectionTerminated } from './connection-errors.js';
import type { AnyPgDatabase } from './db.js';
import { completingStatement, wroteNothing } from './merged-completion.js';
import { nodePgPool, type PgPool } from './pool-statements.js';
import {
  type BeginRow,
  beginAnswer,
  beginRowOf,
  type FinishValues,
  WORK_SAVEPOINT,
} from './statements.js';

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

/** The store's statements as literal SQL, for the merged queries (statements.ts). */
export interface MergedStatements {
  /** The lock of the fence: a row when our token still holds the record. */
  lock(fence: Fence, literal: (value: string) => string): string;
  /** The fenced completion, as a boolean expression. */
  complete(fence: Fence, completion: CompletionRecord, literal: (value: string) => string): string;
  /** The one-transaction claim: one row, its answer (`beginRowOf`). */
  begin(request: ClaimRequest, literal: (value: string) => string): string;
  /** The one-transaction completion, as a boolean expression. */
  finish(values: FinishValues, literal: (value: string) => string): string;
}

export interface PoolTransactions {
  /**
   * Runs `work` in a READ COMMITTED transaction that holds the fence's record locked for its
   * whole life; throws `LeaseLostError` without running `work` when the claim is no longer ours.
   */
  run<T>(fence: Fence, work: (tx: AnyPgDatabase) => Promise<T>): Promise<T>;
  /**
   * The one-transaction claim (`IdempotencyStore.claimAndRun`) in three round trips, as many
   * as the unguarded mutation: BEGIN, the claim and the work's savepoint as one query; the
   * work; the completion (after a rollback to the savepoint, for a kept error) with COMMIT.
   * A replay, 409 or 422 is answered after the first; the empty transaction's ROLLBACK goes
   * after the answer, and the client back to the pool once it is done.
   */
  claimAndRun<T>(
    request: ClaimRequest,
    token: string,
    work: (tx: AnyPgDatabase, claim: { takenOver: boolean }) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>>;
  /**
   * Defers the fenced completion of `tx`'s own claim to its COMMIT. `true`: deferred (it
   * holds, see above); `false`: that claim was completed in `tx` already (as a second fenced
   * UPDATE would answer); `undefined`: `tx` is not one of ours or `fence` is not its claim.
   */
  defer(tx: unknown, fence: Fence, completion: CompletionRecord): boolean | undefined;
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
  /** The transaction each open handle belongs to, and the completion it defers. */
  const open = new WeakMap<object, { fence: Fence; completion?: CompletionRecord }>();
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
      token: string,
      work: (tx: AnyPgDatabase, claim: { takenOver: boolean }) => Promise<WorkEnding<T>>,
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
          ending = await work(tx, { takenOver: row?.status === 'taken_over' });
        } catch (error) {
          // As Drizzle's `db.transaction` does: a ROLLBACK that fails is the error that counts.
          throw (await rollBack(client)) ?? error;
        }
        const { completion } = ending;
        const finish = statements.finish(
          { request, token, replace: row?.replace === true, completion },
          literal,
        );
        await inTransaction(
          client,
          `${completingStatement(finish, completion.outcome)}; commit`,
        ).catch((error: unknown) => {
          if (wroteNothing(error)) throw new LeaseLostError();
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

    async run<T>(fence: Fence, work: (tx: AnyPgDatabase) => Promise<T>): Promise<T> {
      const { client, literal, handle } = await checkOut();
      const tx = handle();
      const state: { fence: Fence; completion?: CompletionRecord } = { fence };
      let lost: Error | undefined;
      try {
        const opened = await inTransaction(
          client,
          `begin isolation level read committed; ${statements.lock(fence, literal)}`,
        );
        const locked = Array.isArray(opened) ? opened[1] : undefined;
        if (!locked?.rows.length) {
          await rollBack(client);
          throw locked
            ? new LeaseLostError()
            : new Error(
                'mutation-guard/postgres: BEGIN and the lock did not answer as two statements.',
              );
        }
        open.set(tx, state);
        let value: T;
        try {
          value = await work(tx);
        } catch (error) {
          // As Drizzle's `db.transaction` does: a ROLLBACK that fails (the connection went,
          // under the work's statement or since) is the error that counts, a store failure
          // (S15), not the work's own.
          throw (await rollBack(client)) ?? error;
        }
        const { completion } = state;
        await inTransaction(
          client,
          completion
            ? `${completingStatement(statements.complete(fence, completion, literal))}; commit`
            : 'commit',
        ).catch((error: unknown) => {
          if (completion && wroteNothing(error)) throw new LeaseLostError();
          throw error;
        });
        return value;
      } catch (error) {
        lost = lostConnection(error);
        throw error;
      } finally {
        open.delete(tx);
        client.release(lost);
      }
    },

    defer(tx: unknown, fence: Fence, completion: CompletionRecord): boolean | undefined {
      const state = typeof tx === 'object' && tx !== null ? open.get(tx) : undefined;
      if (!state || !sameFence(state.fence, fence)) return undefined;
      if (state.completion) return false;
      state.completion = completion;
      return true;
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

function sameFence(a: Fence, b: Fence): boolean {
  return a.token === b.token && a.scope === b.scope && a.key === b.key;
}
