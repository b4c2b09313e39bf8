/**
 * Every statement of the Postgres store (SPEC S7, S8, S11, S14), built once per store (table
 * name and all) with named placeholders; each call only fills in its values.
 *
 * The claim and the record (`begin`, `finish`) call the server-side functions of the
 * migration drizzle/postgres/0000_init.sql, which hold their SQL and rules: PL/pgSQL keeps a
 * statement's plan for the session, so the server parses and plans only the one-line call.
 * Unlike named prepared statements, this works behind any pooler in transaction mode (S27).
 * `read` and `purge` are rare and stay plain statements. Times are the database's clock (S11).
 *
 * Every name is schema-qualified, the table's as its functions': which table a statement
 * touches must not depend on the connection's `search_path` (schema-name.ts says why).
 */
import { type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { ClaimRequest, CompletionRecord } from '../store/seam.js';
import { BEGIN_ANSWER } from './begin-answer.js';
import { functionNames } from './functions.js';
import { qualifiedName } from './schema-name.js';
import { type PgIdempotencyTable, placeOf } from './table.js';

/**
 * The savepoint between the claim and the work: a kept final error rolls the work back to it
 * and writes its record after, in the same transaction (SPEC S12). Taken after the claim,
 * since rolling back to a savepoint taken before a lock would release the lock.
 */
export const WORK_SAVEPOINT = 'mutation_guard_work';

/** The values of the record's statement (`_finish`). */
export interface FinishValues {
  request: ClaimRequest;
  replace: boolean;
  completion: CompletionRecord;
}

export type Statements = ReturnType<typeof buildStatements>;

const p = (name: string) => sql.placeholder(name);
/** A timestamptz as epoch milliseconds: the same number on every driver (they return text). */
const epochMs = (expression: SQL) => sql`(extract(epoch from ${expression}) * 1000)::float8`;

export function buildStatements(t: PgIdempotencyTable) {
  const dialect = new PgDialect();
  const build = (query: SQL): Query => dialect.sqlToQuery(query);
  const { schema, name: table } = placeOf(t);
  const fn = functionNames(table);
  const call = (name: string) => sql.raw(qualifiedName(schema, name));
  // Drizzle writes a table of `public` unqualified: named here instead.
  const records = sql.raw(qualifiedName(schema, table));
  const byKey = sql`scope = ${p('scope')} and key = ${p('key')}`;
  return {
    /** S7, S10, S11: the claim, inside the business transaction. */
    begin: build(
      sql`select ${call(fn.begin)}(${p('scope')}::text, ${p('key')}::text, ${p('fingerprint')}::text) as ${sql.identifier(BEGIN_ANSWER)}`,
    ),

    /** S7, S8: the record, written once, complete, with the business writes. */
    finish: build(sql`select ${call(fn.finish)}(${p('scope')}::text, ${p('key')}::text,
      ${p('fingerprint')}::text, ${p('operation')}::text, ${p('replace')}::boolean,
      ${p('outcome')}::text, ${p('result')}::text, ${p('retentionMs')}::float8) as done`),

    savepoint: build(sql.raw(`savepoint ${WORK_SAVEPOINT}`)),
    rollbackToSavepoint: build(sql.raw(`rollback to savepoint ${WORK_SAVEPOINT}`)),

    /** A record's columns (PgRecordRow), read with one reading of the database clock. */
    read: build(sql`select fingerprint, operation, outcome, result,
      ${epochMs(sql`expires_at`)} as expires_ms,
      ${epochMs(sql`created_at`)} as created_ms,
      ${epochMs(sql`clock_timestamp()`)} as read_ms
      from ${records} where ${byKey}`),

    /**
     * S14: bounded batches keep each statement's locks short; SKIP LOCKED leaves rows that a
     * claim is replacing (or another purger is deleting) alone. The cutoff is a scalar
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
 * The claim and the record as literal SQL, for the simple-protocol queries that carry them
 * with what goes with them in one round trip (BEGIN and COMMIT on a node-postgres Pool,
 * pool-transaction.ts; the isolation level and the savepoint on postgres.js, store.ts). Such a
 * query takes no parameters: `literal` is the driver's own escaping (or `quoteLiteral`), and
 * the one number is checked to be finite before it is written out.
 */
export interface MergedStatements {
  /** The claim: one row, its answer (`beginRowOf`). */
  begin(request: ClaimRequest, literal: (value: string) => string): string;
  /** The record, as a boolean expression: true when it was written. */
  finish(values: FinishValues, literal: (value: string) => string): string;
}

export function mergedStatements(t: PgIdempotencyTable): MergedStatements {
  const { schema, name: table } = placeOf(t);
  const fn = functionNames(table);
  const call = (name: string) => qualifiedName(schema, name);
  return {
    begin: ({ scope, key, fingerprint }, literal) =>
      `select ${call(fn.begin)}(${literal(scope)}::text, ${literal(key)}::text, ${literal(fingerprint)}::text) as ${BEGIN_ANSWER}`,
    finish: ({ request, replace, completion }, literal) =>
      `${call(fn.finish)}(${literal(request.scope)}::text, ${literal(request.key)}::text, ${literal(request.fingerprint)}::text, ${literal(request.operation)}::text, ${replace ? 'true' : 'false'}, ${literal(completion.outcome)}::text, ${literal(completion.result)}::text, ${finite(completion.retentionMs)}::float8)`,
  };
}

/** The named values of the `finish` statement. */
export function finishValues({ request, replace, completion }: FinishValues) {
  return {
    scope: request.scope,
    key: request.key,
    fingerprint: request.fingerprint,
    operation: request.operation,
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
