/**
 * Every statement of the Postgres store (SPEC S7, S8, S11, S14), built once per store (table
 * name and all) with named placeholders; each call only fills in its values.
 *
 * The hot ones (begin and finish, the one-transaction claim; claim, lock, complete and release,
 * the lease model's) call the server-side functions of the migrations
 * drizzle/postgres/0001_functions.sql and 0002_one_transaction.sql, which hold their SQL and rules:
 * PL/pgSQL keeps a statement's plan for the session, so the server parses and plans only
 * the one-line call, where 0.1.0 sent the statements themselves, unnamed, and the server
 * parsed and planned each on every call (most of a guarded call's cost). Unlike named
 * prepared statements, this works behind any pooler in transaction mode (S27). `read` and
 * `purge` are rare and stay plain statements. Times are the database's clock (S11).
 *
 * Every name is schema-qualified, the table's as its functions': which table a statement
 * touches must not depend on the connection's `search_path` (schema-name.ts says why).
 */
import { type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { type RecordRow, toStoredRecord } from '../store/records.js';
import type {
  ClaimAndRunResult,
  ClaimRequest,
  CompletionRecord,
  Fence,
  RecordKey,
} from '../store/seam.js';
import { functionNames } from './functions.js';
import type { MergedStatements } from './pool-transaction.js';
import { qualifiedName } from './schema-name.js';
import { type PgIdempotencyTable, placeOf } from './table.js';

/**
 * A record as our statements return it: the shared row (times as epoch milliseconds, float8)
 * and `read_ms`, the database clock when it was read (S11).
 */
export interface PgRecordRow extends RecordRow {
  read_ms: number;
}

/** What the claim function returns (its comment in the migration says what each means). */
export type ClaimStatus = 'claimed' | 'taken_over' | 'exists' | 'replacing' | 'again';

/** The claim function's row: its status, and the record that stands when `exists`. */
export interface ClaimRow extends Partial<PgRecordRow> {
  status: ClaimStatus;
}

/** The one-transaction claim function's statuses (its comment in 0002 says what each means). */
export type BeginStatus = 'claimed' | 'taken_over' | 'exists' | 'busy' | 'reused';

/**
 * The one-transaction claim's answer: its status, whether `_finish` overwrites a row it holds
 * locked (`replace`), and the record that stands when `exists`.
 */
export interface BeginRow extends Partial<PgRecordRow> {
  status: BeginStatus;
  replace: boolean;
}

/**
 * The row of the statement that calls the one-transaction claim: its answer, one JSON object
 * as text (0002_one_transaction says why a scalar), read by `beginRowOf`.
 */
export interface BeginCall {
  [BEGIN_ANSWER]: string;
}

/** The column of the claim's answer in the statements below. */
export const BEGIN_ANSWER = 'mutation_guard_begin';

/**
 * The claim's answer from its statement's row; `undefined` when there is none. An answer this
 * version cannot read (a `_begin` of another shape) is an error that says what to do, never
 * the answer itself: it may hold a stored result (S26).
 */
export function beginRowOf(row: unknown): BeginRow | undefined {
  const answer = (row as Partial<BeginCall> | undefined)?.[BEGIN_ANSWER];
  if (answer === undefined) return undefined;
  const parsed = typeof answer === 'string' ? parsedJson(answer) : undefined;
  if (typeof parsed?.status !== 'string') {
    throw new Error(
      'mutation-guard/postgres: the begin function answered in a shape this version does not read; apply the migration 0002_one_transaction of this version (migratePostgres, or postgresFunctionsSql() again if drizzle-kit owns the table: docs/migrations.md).',
    );
  }
  return parsed as BeginRow;
}

function parsedJson(text: string): Partial<BeginRow> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the one-transaction claim found, as `claimAndRun` answers it; `undefined` when the key
 * is ours and the work runs.
 */
export function beginAnswer(
  request: RecordKey,
  row: BeginRow | undefined,
): Exclude<ClaimAndRunResult<never>, { status: 'done' }> | undefined {
  switch (row?.status) {
    case 'claimed':
    case 'taken_over':
      return undefined;
    case 'exists': {
      const record = row as BeginRow & PgRecordRow;
      return { status: 'exists', record: toStoredRecord(request, record, record.read_ms) };
    }
    case 'busy':
      return { status: 'in_flight', sameRequest: true };
    case 'reused':
      return { status: 'in_flight', sameRequest: false };
    default:
      throw new Error(
        `mutation-guard/postgres: unexpected answer from the begin function: ${JSON.stringify(row?.status)}.`,
      );
  }
}

/** The values of the one-transaction completion (`_finish`). */
export interface FinishValues {
  request: ClaimRequest;
  token: string;
  replace: boolean;
  completion: CompletionRecord;
}

/**
 * The savepoint between the one-transaction claim and the work: a kept final error rolls the
 * work back to it and writes its record after, in the same transaction (SPEC S12). Taken after
 * the claim, since rolling back to a savepoint taken before a lock would release the lock.
 */
export const WORK_SAVEPOINT = 'mutation_guard_work';

export type Statements = ReturnType<typeof buildStatements>;

const p = (name: string) => sql.placeholder(name);
/** A timestamptz as epoch milliseconds: the same number on every driver (they return text). */
const epochMs = (expression: SQL) => sql`(extract(epoch from ${expression}) * 1000)::float8`;

export function buildStatements(t: PgIdempotencyTable, { asyncClaim }: { asyncClaim: boolean }) {
  const dialect = new PgDialect();
  const build = (query: SQL): Query => dialect.sqlToQuery(query);
  const { schema, name: table } = placeOf(t);
  const fn = functionNames(table);
  const call = (name: string) => sql.raw(qualifiedName(schema, name));
  // Drizzle writes a table of `public` unqualified: named here instead.
  const records = sql.raw(qualifiedName(schema, table));
  const byKey = sql`scope = ${p('scope')} and key = ${p('key')}`;
  // Casts name each parameter's type, so that every driver's way of sending values (untyped
  // text, or typed by their JavaScript type) resolves to the same function.
  const fence = sql`${p('scope')}::text, ${p('key')}::text, ${p('token')}::text`;
  /** A record's columns (PgRecordRow), `readAt` being one reading of the database clock. */
  const record = (readAt: SQL) => sql`fingerprint, operation, state, outcome, result,
    ${epochMs(sql`lease_expires_at`)} as lease_expires_ms,
    ${epochMs(sql`expires_at`)} as expires_ms,
    ${epochMs(sql`created_at`)} as created_ms,
    ${epochMs(readAt)} as read_ms`;
  return {
    /**
     * S7 in one round trip: inserts our claim, takes over a record the rule allows, or
     * returns the record that stands, read with the database clock.
     *
     * Asynchronous commit (`asyncClaim`): the claim commits on its own, before the business
     * transaction, so waiting for its WAL flush would cost a second flush per fresh call. It
     * need not wait, because losing it is harmless. A crash can lose only an unflushed
     * claim, which leaves the key absent: the state before the claim. Nothing that depended
     * on it can have committed: the business transaction needs the row (its lock and fenced
     * completion match on the token) and begins after the claim's commit record is in the
     * WAL, so its own synchronous commit flushes the WAL up to and including the claim's; a
     * crash before that flush loses both. The original's connection dies with the server,
     * so it never completes; a retry claims afresh. Other sessions see an asynchronously
     * committed row at once (only the flush is late), so S7 holds as before, and a standby
     * receives the WAL in order, so one that has the business commit has the claim too.
     * The function sets `synchronous_commit` for its own statement's transaction only; not
     * when the claim joins an outer transaction, whose commit it would weaken.
     */
    claim: build(sql`select * from ${call(fn.claim)}(${p('scope')}::text, ${p('key')}::text,
      ${p('fingerprint')}::text, ${p('operation')}::text, ${p('token')}::text,
      ${p('leaseMs')}::float8, ${p('expiresMs')}::float8, ${sql.raw(String(asyncClaim))})`),

    /** S8/S11: the fence, locked for the business transaction's life. */
    lock: build(sql`select * from ${call(fn.lock)}(${fence})`),

    /** S8: the fenced completion. */
    complete: build(sql`select ${call(fn.complete)}(${fence}, ${p('outcome')}::text,
      ${p('result')}::text, ${p('retentionMs')}::float8) as done`),

    /** S12: the fenced release of a claim. */
    release: build(sql`select ${call(fn.release)}(${fence}) as done`),

    /** S7, S10, S11: the one-transaction claim, inside the business transaction. */
    begin: build(
      sql`select ${call(fn.begin)}(${p('scope')}::text, ${p('key')}::text, ${p('fingerprint')}::text) as ${sql.identifier(BEGIN_ANSWER)}`,
    ),

    /** S7, S8: the record, written once, complete, with the business writes. */
    finish: build(sql`select ${call(fn.finish)}(${p('scope')}::text, ${p('key')}::text,
      ${p('fingerprint')}::text, ${p('operation')}::text, ${p('token')}::text,
      ${p('replace')}::boolean, ${p('outcome')}::text, ${p('result')}::text,
      ${p('retentionMs')}::float8) as done`),

    savepoint: build(sql.raw(`savepoint ${WORK_SAVEPOINT}`)),
    /** postgres.js: the transaction's level, as its first statement (store.ts says why). */
    readCommitted: build(sql.raw('set transaction isolation level read committed')),
    rollbackToSavepoint: build(sql.raw(`rollback to savepoint ${WORK_SAVEPOINT}`)),

    read: build(sql`select ${record(sql`clock_timestamp()`)} from ${records} where ${byKey}`),

    /**
     * S14: bounded batches keep each statement's locks short; SKIP LOCKED leaves rows that a
     * claim is taking over (or another purger is deleting) alone. The cutoff is a scalar
     * subquery, computed once per statement (an InitPlan): `clock_timestamp()` itself is
     * volatile, and a volatile comparison cannot be an index condition, so the planner would
     * scan the whole table for a handful of expired rows instead of `<table>_expires_at_idx`.
     * The batch is then deleted by `ctid = any(array(...))`, a TID scan; with `ctid in (...)`
     * the planner joins the batch against a scan of the whole table.
     */
    purge: build(sql`
      with deleted as (
        delete from ${records} where ctid = any(array(
          select ctid from ${records}
          where expires_at <= (select clock_timestamp())
          limit ${p('batchSize')}
          for update skip locked
        ))
        returning 1
      )
      select count(*)::int as count from deleted`),
  };
}

/**
 * The lock and the fenced completion as literal SQL, for the queries that node-postgres sends
 * merged with BEGIN and COMMIT (pool-transaction.ts says why). A simple-protocol query takes
 * no parameters: `literal` is the driver's own escaping, and the one number is checked to be
 * finite before it is written out.
 */
export function mergedStatements(t: PgIdempotencyTable): MergedStatements {
  const { schema, name: table } = placeOf(t);
  const fn = functionNames(table);
  const call = (name: string) => qualifiedName(schema, name);
  const fence = ({ scope, key, token }: Fence, literal: (value: string) => string) =>
    `${literal(scope)}::text, ${literal(key)}::text, ${literal(token)}::text`;
  return {
    lock: (record, literal) => `select 1 from ${call(fn.lock)}(${fence(record, literal)})`,
    complete: (record, completion: CompletionRecord, literal) =>
      `${call(fn.complete)}(${fence(record, literal)}, ${literal(completion.outcome)}::text, ${literal(completion.result)}::text, ${finite(completion.retentionMs)}::float8)`,
    begin: ({ scope, key, fingerprint }, literal) =>
      `select ${call(fn.begin)}(${literal(scope)}::text, ${literal(key)}::text, ${literal(fingerprint)}::text) as ${BEGIN_ANSWER}`,
    finish: ({ request, token, replace, completion }, literal) =>
      `${call(fn.finish)}(${literal(request.scope)}::text, ${literal(request.key)}::text, ${literal(request.fingerprint)}::text, ${literal(request.operation)}::text, ${literal(token)}::text, ${replace ? 'true' : 'false'}, ${literal(completion.outcome)}::text, ${literal(completion.result)}::text, ${finite(completion.retentionMs)}::float8)`,
  };
}

/** The named values of the `finish` statement. */
export function finishValues({ request, token, replace, completion }: FinishValues) {
  return {
    scope: request.scope,
    key: request.key,
    fingerprint: request.fingerprint,
    operation: request.operation,
    token,
    replace,
    outcome: completion.outcome,
    result: completion.result,
    retentionMs: completion.retentionMs,
  };
}

function finite(value: number): string {
  if (!Number.isFinite(value)) {
    throw new TypeError(`mutation-guard/postgres: expected a finite number, got ${value}.`);
  }
  return String(value);
}
