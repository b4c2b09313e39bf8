/**
 * The Postgres store (SPEC S24): many processes, one database, READ COMMITTED.
 *
 * How the rules of src/store/seam.ts are met, by the server-side functions of the migration
 * drizzle/postgres/0001_functions.sql (statements.ts says why functions):
 * - claim (S7) is one call of `<table>_claim`: it reads the record and, when there is none,
 *   claims with `INSERT ... ON CONFLICT DO NOTHING`, committed on its own before the business
 *   transaction begins. (Were it inside that transaction, a concurrent claim's ON CONFLICT
 *   would block on the uncommitted row until the whole mutation ended.) A replay, a 409 and a
 *   422 are that one read; a fresh call is one round trip too. Its commit is asynchronous:
 *   see `claim` in statements.ts for why losing it in a crash is harmless.
 * - a takeover (S11, S14), in the same call, is one compare-and-set UPDATE whose target is
 *   selected `FOR UPDATE SKIP LOCKED`, tried only when the record read was eligible: the
 *   original's business transaction holds a row lock on its record for its whole life, so
 *   while it runs the takeover skips the row and the caller sees "exists" at once (409, S10)
 *   instead of blocking on the lock.
 * - transaction (S8) locks the record `FOR UPDATE` where token and state still match
 *   (`<table>_lock`), or throws LeaseLostError without running the work; complete/release
 *   are fenced by token. On a node-postgres Pool the lock rides with BEGIN and the
 *   transaction's own completion with COMMIT, in one query each (pool-transaction.ts).
 * - every time is the database's clock (`clock_timestamp()`), never the app server's (S11).
 * - every statement's SQL is built once per store (statements.ts); a call only fills in values.
 * - the transaction never settles before its work, and refuses statements once the driver
 *   has ended it (transaction.ts); on PGlite's single connection, nested calls join the
 *   outer transaction and duplicates of a running key get 409 at once (single-connection.ts).
 *
 * Waits: a claim reads without waiting. A record whose original is committing right now is
 * read as its last committed version, in flight: 409 (or, with `wait`, the guard looks again
 * and replays). Only a claim racing another claim's INSERT of the same new key waits, for
 * that INSERT's commit, which follows at once.
 *
 * Isolation: our transactions always run READ COMMITTED, whatever the server's
 * `default_transaction_isolation`, so a stricter default cannot make our own statements fail
 * with a serialization error (SQLSTATE 40001); our statements outside a transaction retry
 * one instead (serialization.ts). The user's writes run in that same
 * READ COMMITTED transaction; should they still hit a serialization failure or deadlock, it
 * propagates as their error (the claim is released and a retry runs afresh).
 *
 * Drizzle wraps driver errors (the driver's error, with its SQLSTATE `code`, is on `cause`);
 * we let them propagate: the guard turns store failures into 503 (S15). On a node-postgres
 * Pool the store's own autocommit statements skip Drizzle and reach the caller as the
 * driver's error itself (pool-statements.ts); every code is read along the cause chain.
 */
import { randomUUID } from 'node:crypto';
import { getTableName, is, type Query, sql } from 'drizzle-orm';
import { type PgSession, PgTransaction } from 'drizzle-orm/pg-core';
import { assertPurgeOptions } from '../store/purge-options.js';
import { toStoredRecord } from '../store/records.js';
import {
  type ClaimRequest,
  type ClaimResult,
  type CompletionRecord,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type PurgeOptions,
  type RecordKey,
  type StoredRecord,
  type StoreExtras,
} from '../store/seam.js';
import { absorbConnectionErrors, absorbPoolConnectionErrors } from './connection-errors.js';
import { type AnyPgDatabase, driverOf, type PgTransactionOf, rowsOf } from './db.js';
import { explainMissingFunctions } from './functions.js';
import { nodePgPool, type PoolStatement, poolStatement } from './pool-statements.js';
import { poolTransactions } from './pool-transaction.js';
import { retryingSerializationFailures } from './serialization.js';
import { isSingleConnection, singleConnection } from './single-connection.js';
import {
  buildStatements,
  type ClaimRow,
  mergedStatements,
  type PgRecordRow,
} from './statements.js';
import { idempotencyRecords, type PgIdempotencyTable, pgIdempotencyTable } from './table.js';
import { runTransaction } from './transaction.js';

export interface PostgresStoreOptions {
  /**
   * The records table: one built with `pgIdempotencyTable(name)`, or just its name. It must
   * exist: create it with `migratePostgres(db, { table })` or your own drizzle-kit migration.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: PgIdempotencyTable | string;
}

const READ_COMMITTED = sql`set transaction isolation level read committed`;

/** What the completing and releasing functions return: whether our token still held the record. */
interface Done {
  done: boolean;
}

/** A claim that lost every race in a row (a record deleted between our statements). */
const CLAIM_ATTEMPTS = 5;

/**
 * Creates the Postgres store for a Drizzle database on node-postgres, postgres.js or PGlite.
 * The guarded work receives `db.transaction`'s own transaction handle, typed for your `db`.
 */
export function postgresStore<Db extends AnyPgDatabase>(
  db: Db,
  options: PostgresStoreOptions = {},
): IdempotencyStore<PgTransactionOf<Db>> & StoreExtras {
  type Tx = PgTransactionOf<Db>;
  const t =
    typeof options.table === 'string'
      ? pgIdempotencyTable(options.table)
      : (options.table ?? idempotencyRecords);
  // A claim of its own commits asynchronously (statements.ts, `claim`, says why); not when
  // `db` is itself a transaction, whose commit (the app's writes with it) it would weaken.
  const statements = buildStatements(t, { asyncClaim: !is(db, PgTransaction) });
  absorbPoolConnectionErrors(db);
  const tableName = getTableName(t);
  const single = isSingleConnection(db) ? singleConnection(db, tableName) : undefined;
  /**
   * postgres.js: Drizzle sets a transaction's isolation level with a statement of its own
   * before our callback runs. Were the connection lost under that statement, postgres.js
   * would send its ROLLBACK on the dead socket and crash the process (transaction.ts), so
   * we send it ourselves, first thing in the callback, where a loss is handled.
   */
  const isolationInside = driverOf(db) === 'postgres.js';
  /**
   * On a node-postgres Pool, guarded transactions that merge the lock into BEGIN and the
   * completion into COMMIT, and always give their client back (pool-transaction.ts); on any
   * other database, `db.transaction`.
   */
  const pooled = poolTransactions(db, mergedStatements(t));
  const begin = db.transaction.bind(db);
  // A claim joined to an outer transaction must not weaken that transaction's commit.
  const joinedClaim = single && buildStatements(t, { asyncClaim: false }).claim;

  /**
   * Statements on `db` itself are prepared (client-side: SQL and parameter order) once; those
   * inside a transaction once per transaction, on its connection's session.
   */
  type Prepared = ReturnType<PgSession['prepareQuery']>;
  const prepare = (handle: AnyPgDatabase, query: Query): Prepared =>
    (handle._.session as PgSession).prepareQuery(query, undefined, undefined, false);
  /** On a node-postgres Pool, straight to the pool (pool-statements.ts says why). */
  const pool = nodePgPool(db);
  const onDbStatement = (query: Query): PoolStatement => {
    if (pool) return poolStatement(db, pool, query);
    const prepared = prepare(db, query);
    return <Row>(values: Record<string, unknown>) => rowsFrom<Row>(prepared, values);
  };
  const onDb = {
    claim: onDbStatement(statements.claim),
    read: onDbStatement(statements.read),
    complete: onDbStatement(statements.complete),
    release: onDbStatement(statements.release),
    purge: onDbStatement(statements.purge),
  };
  type Statement = keyof typeof onDb;

  /**
   * Runs one of the store's own statements: on its own (autocommit, retried on a
   * serialization failure), or, for a call nested in guarded work on PGlite, inside the
   * outer transaction (where a retry could not help, and the claim commits synchronously).
   */
  async function run<Row>(name: Statement, values: Record<string, unknown>): Promise<Row[]> {
    const outer = single?.outerTransaction();
    if (outer) {
      const query = name === 'claim' && joinedClaim ? joinedClaim : statements[name];
      return execute<Row>(prepare(outer, query), values);
    }
    return retryingSerializationFailures(() => explained(onDb[name]<Row>(values)));
  }

  /** Runs a prepared statement of a transaction (or PGlite's outer one). */
  function execute<Row>(statement: Prepared, values: Record<string, unknown>) {
    return explained(rowsFrom<Row>(statement, values));
  }

  async function rowsFrom<Row>(statement: Prepared, values: Record<string, unknown>) {
    return rowsOf<Row>(await statement.execute(values));
  }

  /** The rows of a statement; a missing function of ours becomes an error that says why. */
  async function explained<Row>(rows: Promise<Row[]>): Promise<Row[]> {
    try {
      return await rows;
    } catch (error) {
      throw explainMissingFunctions(error, tableName);
    }
  }

  async function read(record: RecordKey): Promise<StoredRecord | undefined> {
    const [row] = await run<PgRecordRow>('read', { scope: record.scope, key: record.key });
    return row ? toStoredRecord(record, row, row.read_ms) : undefined;
  }

  return {
    dialect: 'postgres',

    async claim(request: ClaimRequest): Promise<ClaimResult> {
      const running = single?.running(request);
      if (running) return { status: 'exists', record: running };
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const token = randomUUID();
        const [row] = await run<ClaimRow>('claim', claimValues(request, token));
        switch (row?.status) {
          case 'claimed':
            return { status: 'claimed', token, takenOver: false };
          case 'taken_over':
            return { status: 'claimed', token, takenOver: true };
          case 'exists': {
            const record = row as PgRecordRow;
            return { status: 'exists', record: toStoredRecord(request, record, record.read_ms) };
          }
          case 'replacing':
            // S14: past its expiry, yet a concurrent takeover (or a purge) holds it right now.
            // It is never replayed: look again, and if it is still being replaced, it is in
            // flight for someone whose fingerprint we cannot know yet (409, never 422).
            if (attempt === CLAIM_ATTEMPTS - 1) {
              const record = await read(request);
              if (record && record.expiresAt > record.readAt) return { status: 'exists', record };
              if (record) {
                return { status: 'exists', record: beingReplaced(record, request.fingerprint) };
              }
            }
            continue;
          case 'again':
            // The conflicting record was deleted between the function's statements, or (under
            // a stricter isolation default) committed after its snapshot: look again.
            continue;
          default:
            throw new Error(
              `mutation-guard/postgres: unexpected answer from the claim function: ${JSON.stringify(row?.status)}.`,
            );
        }
      }
      throw new Error(
        `mutation-guard/postgres: could not claim or read the record after ${CLAIM_ATTEMPTS} attempts.`,
      );
    },

    read,

    transaction<T>(fence: Fence, work: (tx: Tx) => Promise<T>): Promise<T> {
      if (pooled) {
        return runTransaction(
          (callback) => pooled.run(fence, callback),
          (tx) => work(tx as Tx),
        );
      }
      const outer = single?.outerTransaction();
      return runTransaction(
        outer
          ? // Nested in guarded work on PGlite: a savepoint of the outer transaction.
            (callback) => outer.transaction(callback)
          : isolationInside
            ? (callback) => begin(callback)
            : (callback) => begin(callback, { isolationLevel: 'read committed' }),
        async (tx) => {
          absorbConnectionErrors(tx);
          if (isolationInside && !outer) await tx.execute(READ_COMMITTED);
          // Holding this row lock until commit is what keeps a takeover out while we run (S11).
          const [held] = await execute<PgRecordRow>(
            prepare(tx, statements.lock),
            fenceValues(fence),
          );
          if (!held) throw new LeaseLostError();
          if (!single) return work(tx as Tx);
          return single.holding(toStoredRecord(fence, held, held.read_ms), () =>
            single.inside(tx, () => work(tx as Tx)),
          );
        },
      );
    },

    async complete(fence: Fence, completion: CompletionRecord, tx?: Tx): Promise<boolean> {
      // Inside a pooled transaction, its own completion goes with its COMMIT.
      const deferred = tx === undefined ? undefined : pooled?.defer(tx, fence, completion);
      if (deferred !== undefined) return deferred;
      const values = {
        ...fenceValues(fence),
        outcome: completion.outcome,
        result: completion.result,
        retentionMs: completion.retentionMs,
      };
      const rows = tx
        ? await execute<Done>(prepare(tx as AnyPgDatabase, statements.complete), values)
        : await run<Done>('complete', values);
      return rows[0]?.done === true;
    },

    async release(fence: Fence): Promise<boolean> {
      return (await run<Done>('release', fenceValues(fence)))[0]?.done === true;
    },

    async purge(options: PurgeOptions): Promise<number> {
      assertPurgeOptions(options);
      const { batchSize, maxBatches } = options;
      let total = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        const [row] = await run<{ count: number }>('purge', { batchSize });
        const count = Number(row?.count ?? 0);
        total += count;
        if (count < batchSize) break;
      }
      return total;
    },
  };
}

/**
 * An expired record that a concurrent claim is replacing right now, as the guard must see
 * it: in flight, nothing to replay, and (since the new owner's fingerprint is unknown) the
 * caller's own fingerprint, so that it is told to retry (409) rather than 422.
 */
function beingReplaced(record: StoredRecord, fingerprint: string): StoredRecord {
  return {
    ...record,
    fingerprint,
    state: 'in_flight',
    outcome: null,
    result: null,
    leaseExpiresAt: record.readAt,
  };
}

function claimValues(request: ClaimRequest, token: string): Record<string, unknown> {
  return {
    scope: request.scope,
    key: request.key,
    fingerprint: request.fingerprint,
    operation: request.operation,
    token,
    leaseMs: request.leaseMs,
    expiresMs: request.leaseMs + request.retentionMs,
  };
}

function fenceValues(fence: Fence): Record<string, unknown> {
  return { scope: fence.scope, key: fence.key, token: fence.token };
}
