/**
 * The Postgres store (SPEC S24): many processes, one database, READ COMMITTED.
 *
 * A guarded call is one transaction, by the two server-side functions of the migration
 * drizzle/postgres/0000_init.sql (statements.ts says why functions):
 * - `<table>_begin` (the key's advisory lock, a hint, and the record's read), a savepoint, the
 *   work, `<table>_finish` (the record inserted once, complete, with its result), COMMIT. A
 *   replay, 409 or 422 is the first statement's answer, and the transaction ends with nothing
 *   written.
 * - the key is held while the transaction lives: the server drops the lock at its end, or
 *   when its connection dies (a crash frees the key at once). Within this process the key
 *   stays held until the work is over, even when the connection went first (held-keys.ts).
 * - the primary key decides (S7, S8): should a row have been committed for the key meanwhile,
 *   `_finish` matches nothing, the transaction rolls back and the caller gets KeyTakenError.
 * - on a node-postgres Pool the claim rides with BEGIN and the record with COMMIT, three
 *   round trips in all (pool-transaction.ts); elsewhere Drizzle's `db.transaction` carries
 *   them one by one.
 *
 * Every time is the database's clock (`clock_timestamp()`), never the app server's (S11); every
 * statement's SQL is built once per store (statements.ts); the transaction never settles before
 * its work, and refuses statements once the driver has ended it (transaction.ts); a guarded
 * call nested in guarded work joins the outer transaction, in a savepoint, on every driver
 * (nesting.ts says why and what that means for its record).
 *
 * Isolation: our transactions always run READ COMMITTED, whatever the server's
 * `default_transaction_isolation`, so a stricter default cannot make our own statements fail
 * with a serialization error (SQLSTATE 40001); our statements outside a transaction (read,
 * purge) retry one instead (serialization.ts). The user's writes run in that same READ
 * COMMITTED transaction; should they still hit a serialization failure or deadlock, it
 * propagates as their error (nothing is written, and a retry runs afresh).
 *
 * Drizzle wraps driver errors (the driver's error, with its SQLSTATE `code`, is on `cause`);
 * we let them propagate: the guard turns store failures into 503 (S15). On a node-postgres
 * Pool a guarded transaction's own statements skip Drizzle and reach the caller as the
 * driver's error itself (pool-transaction.ts); every code is read along the cause chain.
 */
import type { Query } from 'drizzle-orm';
import type { PgSession } from 'drizzle-orm/pg-core';
import { assertPurgeOptions } from '../store/purge-options.js';
import { toStoredRecord } from '../store/records.js';
import {
  type ClaimAndRunResult,
  type ClaimRequest,
  type IdempotencyStore,
  KeyTakenError,
  type PurgeOptions,
  type RecordKey,
  type StoredRecord,
  type StoreExtras,
  type WorkEnding,
} from '../store/seam.js';
import {
  BEGIN_ANSWER,
  type BeginCall,
  type BeginRow,
  beginAnswer,
  beginRowOf,
  type PgRecordRow,
} from './begin-answer.js';
import { absorbConnectionErrors, absorbPoolConnectionErrors } from './connection-errors.js';
import { type AnyPgDatabase, driverOf, type PgTransactionOf, rowsOf } from './db.js';
import { driverErrorOf } from './error-chain.js';
import { explainMissingFunctions } from './functions.js';
import { heldKeys } from './held-keys.js';
import { quoteLiteral } from './literal.js';
import { completingStatement, wroteNothing } from './merged-completion.js';
import { answerOf, nestingOn, SavepointAnswer } from './nesting.js';
import { poolTransactions } from './pool-transaction.js';
import { assertSchemaName, qualifiedName } from './schema-name.js';
import { retryingSerializationFailures } from './serialization.js';
import {
  buildStatements,
  type FinishValues,
  finishValues,
  mergedStatements,
  WORK_SAVEPOINT,
} from './statements.js';
import {
  idempotencyRecords,
  type PgIdempotencyTable,
  pgIdempotencyTable,
  placeOf,
} from './table.js';
import { type Begin, runTransaction } from './transaction.js';

export interface PostgresStoreOptions {
  /**
   * The records table: one built with `pgIdempotencyTable(name)`, or just its name. It must
   * exist: create it with `migratePostgres(db, { table })` or your own drizzle-kit migration.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: PgIdempotencyTable | string;
  /**
   * The schema that holds the table and its functions (one per tenant, say). Every statement
   * names it, so the connection's `search_path` does not matter. A table built with
   * `pgIdempotencyTable(name, { schema })` brings its own: leave this out, or give the same.
   * @default the table's schema: 'public' unless it was built with another
   */
  schema?: string;
}

/** What the record's function returns: whether it wrote the record. */
interface Done {
  done: boolean;
}

/**
 * Creates the Postgres store for a Drizzle database on node-postgres, postgres.js or PGlite.
 * The guarded work receives `db.transaction`'s own transaction handle, typed for your `db`.
 */
export function postgresStore<Db extends AnyPgDatabase>(
  db: Db,
  options: PostgresStoreOptions = {},
): IdempotencyStore<PgTransactionOf<Db>> & StoreExtras {
  type Tx = PgTransactionOf<Db>;
  const t = recordsTable(options);
  const statements = buildStatements(t);
  absorbPoolConnectionErrors(db);
  const { schema, name: tableName } = placeOf(t);
  /** The guarded work a call is made from, if any: it joins that transaction (nesting.ts). */
  const nesting = nestingOn(db);
  /**
   * Keys whose work runs now in this process: their duplicates answer from here (held-keys.ts).
   * By schema too: tenants' tables of one name over one client are different tables (S4).
   */
  const held = heldKeys(db, qualifiedName(schema, tableName));
  /**
   * postgres.js: Drizzle sets a transaction's isolation level with a statement of its own
   * before our callback runs. Were the connection lost under that statement, postgres.js 3
   * would send its ROLLBACK on the dead socket and crash the process (transaction.ts), so
   * we send it ourselves, first thing in the callback, where a loss is handled. postgres.js 4
   * sends no ROLLBACK on a closed connection; there it saves a round trip: the level goes in
   * the opening query (`openedOnPostgresJs`).
   */
  const isolationInside = driverOf(db) === 'postgres.js';
  /**
   * On a node-postgres Pool, guarded transactions that merge the claim into BEGIN and the
   * record into COMMIT, and always give their client back (pool-transaction.ts); on any
   * other database, `db.transaction`.
   */
  const merged = mergedStatements(t);
  const pooled = poolTransactions(db, merged, (error) =>
    explainMissingFunctions(error, schema, tableName),
  );
  const begin = db.transaction.bind(db);
  /**
   * How a guarded transaction begins off a node-postgres Pool: Drizzle's `db.transaction`
   * (postgres.js sets its level itself, first thing in the callback, see above), or, nested in
   * guarded work, a savepoint of the outer transaction.
   */
  const transactionOf = (outer: AnyPgDatabase | undefined): Begin =>
    outer
      ? (callback) => outer.transaction(callback)
      : isolationInside
        ? (callback) => begin(callback)
        : (callback) => begin(callback, { isolationLevel: 'read committed' });

  /**
   * Statements on `db` itself are prepared (client-side: SQL and parameter order) once; those
   * inside a transaction once per transaction, on its connection's session.
   */
  type Prepared = ReturnType<PgSession['prepareQuery']>;
  const prepare = (handle: AnyPgDatabase, query: Query): Prepared =>
    (handle._.session as PgSession).prepareQuery(query, undefined, undefined, false);
  const onDb = {
    read: prepare(db, statements.read),
    purge: prepare(db, statements.purge),
  };
  type Statement = keyof typeof onDb;

  /**
   * Runs one of the store's own statements: on its own (autocommit, retried on a
   * serialization failure), or, for a call nested in guarded work, inside the outer
   * transaction (where a retry could not help).
   */
  async function run<Row>(name: Statement, values: Record<string, unknown>): Promise<Row[]> {
    const outer = nesting.outer();
    if (outer) {
      return outer.queue(() => execute<Row>(prepare(outer.tx, statements[name]), values));
    }
    return retryingSerializationFailures(() => execute<Row>(onDb[name], values));
  }

  /** Runs a prepared statement of a transaction (or of the outer one). */
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
      throw explainMissingFunctions(error, schema, tableName);
    }
  }

  /** The claim and the work's savepoint, as statements of their own. */
  async function opened(tx: AnyPgDatabase, request: ClaimRequest): Promise<BeginRow | undefined> {
    const [rows] = await Promise.all([
      execute<BeginCall>(prepare(tx, statements.begin), {
        scope: request.scope,
        key: request.key,
        fingerprint: request.fingerprint,
      }),
      execute(prepare(tx, statements.savepoint), {}),
    ]);
    return beginRowOf(rows[0]);
  }

  /** The record (after a rollback to the savepoint, for a kept error): whether it was written. */
  async function finished(tx: AnyPgDatabase, finish: Finish): Promise<boolean> {
    const { completion } = finish.ending;
    if (completion.outcome === 'rolled_back') {
      await execute(prepare(tx, statements.rollbackToSavepoint), {});
    }
    const [done] = await execute<Done>(
      prepare(tx, statements.finish),
      finishValues({ ...finish, completion }),
    );
    return done?.done === true;
  }

  /**
   * postgres.js: the same as one simple-protocol query each, the level first (not in a
   * savepoint: the outer transaction has set it). postgres.js describes a statement with
   * parameters before it runs it when it is not to be prepared under a name, as Drizzle's
   * unnamed statements are (3 and 4 alike: a round trip of its own, and what follows waits
   * for it), where a query without parameters goes in the simple protocol, one round trip:
   * the opening is one instead of four, the completion one instead of two. The values go in
   * as literals. Both versions remember a statement of the transaction that failed and roll
   * back even when it was caught (3: `uncaughtError`, 4: `uncaught`): a completion that
   * wrote nothing ends in LeaseLostError all the same.
   */
  async function openedOnPostgresJs(
    tx: AnyPgDatabase,
    request: ClaimRequest,
    nested: boolean,
  ): Promise<BeginRow | undefined> {
    const level = nested ? '' : 'set transaction isolation level read committed; ';
    const opening = `${level}${merged.begin(request, quoteLiteral)}; savepoint ${WORK_SAVEPOINT}`;
    const results = await simple(tx, opening);
    // A result per statement that returns rows: the claim's row is the one with its answer.
    return beginRowOf(results.flat().find(isBeginCall));
  }

  async function finishedOnPostgresJs(tx: AnyPgDatabase, finish: Finish): Promise<boolean> {
    const { completion } = finish.ending;
    const completing = completingStatement(
      merged.finish({ ...finish, completion }, quoteLiteral),
      completion.outcome,
    );
    try {
      await simple(tx, completing);
      return true;
    } catch (error) {
      // A record that was not written (merged-completion.ts): nothing of ours may commit.
      if (wroteNothing(error)) return false;
      throw error;
    }
  }

  /**
   * Runs a simple-protocol query of ours. A failure is the driver's own error, without
   * Drizzle's wrapper: its message repeats the statement, literals and all, and the guard
   * scrubs raw keys and results from what it hands on (S26), not their quoted forms.
   */
  async function simple(tx: AnyPgDatabase, text: string): Promise<unknown[]> {
    try {
      return await rowsFrom<unknown>(prepare(tx, simpleQuery(text)), {});
    } catch (error) {
      throw explainMissingFunctions(driverErrorOf(error), schema, tableName);
    }
  }

  async function read(record: RecordKey): Promise<StoredRecord | undefined> {
    const [row] = await run<PgRecordRow>('read', { scope: record.scope, key: record.key });
    return row ? toStoredRecord(record, row, row.read_ms) : undefined;
  }

  /**
   * The claim through Drizzle, in `begin`'s transaction: `_begin` and the work's savepoint,
   * the work, `_finish`. Top-level off a node-postgres Pool (which merges
   * them into its own round trips, pool-transaction.ts); nested in guarded work on every
   * driver, where `begin` is a savepoint of the outer transaction and a replay, 409 or 422
   * rolls that savepoint back (`answerOf`).
   */
  function oneTransaction<T>(
    begin: Begin,
    nested: boolean,
    request: ClaimRequest,
    work: (tx: Tx) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>> {
    return runTransaction(begin, async (tx): Promise<ClaimAndRunResult<T>> => {
      absorbConnectionErrors(tx);
      const row = isolationInside
        ? await openedOnPostgresJs(tx, request, nested)
        : await opened(tx, request);
      // A replay, 409 or 422: the transaction ends with nothing written.
      const answer = beginAnswer(request, row);
      if (answer && nested) throw new SavepointAnswer(answer);
      if (answer) return answer;
      const ending = await held.holding(request, () => nesting.inside(tx, () => work(tx as Tx)));
      const finish = { request, replace: row?.replace === true, ending };
      const written = isolationInside
        ? await finishedOnPostgresJs(tx, finish)
        : await finished(tx, finish);
      // A record was committed for the key meanwhile: nothing of ours may commit (S8).
      if (!written) throw new KeyTakenError();
      return { status: 'done', value: ending.value };
    });
  }

  return {
    dialect: 'postgres',

    read,

    claimAndRun<T>(
      request: ClaimRequest,
      work: (tx: Tx) => Promise<WorkEnding<T>>,
    ): Promise<ClaimAndRunResult<T>> {
      const running = held.running(request);
      if (running) return Promise.resolve(running);
      const outer = nesting.outer();
      if (outer) {
        // Nested in guarded work: a savepoint of its transaction, after the calls before it.
        return outer.queue(() =>
          oneTransaction(transactionOf(outer.tx), true, request, work).catch(
            answerOf<ClaimAndRunResult<T>>,
          ),
        );
      }
      if (pooled) {
        return pooled.claimAndRun(request, (tx) =>
          held.holding(request, () => nesting.inside(tx, () => work(tx as Tx))),
        );
      }
      return oneTransaction(transactionOf(undefined), false, request, work);
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
 * The records table the options name, in its schema. A table built for one schema and a
 * `schema` option naming another is refused here, when the store is made: which of them is
 * meant cannot be guessed, and guessing wrong would share one tenant's records with another.
 */
function recordsTable({ table, schema }: PostgresStoreOptions): PgIdempotencyTable {
  if (typeof table === 'string' || (table === undefined && schema !== undefined)) {
    return pgIdempotencyTable(table, { schema });
  }
  if (table === undefined) return idempotencyRecords;
  if (schema !== undefined) {
    assertSchemaName(schema);
    const built = placeOf(table);
    if (built.schema !== schema) {
      throw new TypeError(
        `mutation-guard/postgres: the table option was built for schema "${built.schema}", but the schema option says "${schema}". Give the schema once: pgIdempotencyTable('${built.name}', { schema: '${schema}' }) as the table, or leave the schema option out.`,
      );
    }
  }
  return table;
}

/** What the record's statement writes, and the work's answer it writes. */
interface Finish extends Omit<FinishValues, 'completion'> {
  ending: WorkEnding<unknown>;
}

/** A statement with no parameters: postgres.js sends it in the simple protocol. */
function simpleQuery(text: string): Query {
  return { sql: text, params: [] };
}

function isBeginCall(row: unknown): row is BeginCall {
  return typeof row === 'object' && row !== null && BEGIN_ANSWER in row;
}
