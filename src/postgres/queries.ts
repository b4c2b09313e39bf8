/**
 * Every statement of the Postgres store (SPEC S7, S8, S11, S14), built once per store (table
 * name and all) with named placeholders; each call only fills in its values. Times are the
 * database's clock (`clock_timestamp()`), never the app server's (S11).
 *
 * One rule decides what may be claimed over an existing record, the same in the claim's
 * `eligible` column and in the takeover's own re-check (S6, S11, S14):
 * - a record past its whole `expires_at` counts as absent: any request, of any fingerprint,
 *   may claim it (a complete record past retention, or a dead in-flight claim whose lease
 *   and retention both ran out);
 * - an in-flight record whose lease expired, but not past `expires_at`, may be taken over by
 *   the same fingerprint only; another fingerprint sees it and gets 422.
 */
import { type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { RecordOutcome, RecordState } from '../store.js';
import type { PgIdempotencyTable } from './table.js';

/** A record's columns as our statements return them: times as epoch milliseconds (float8). */
export interface RecordRow {
  fingerprint: string;
  operation: string;
  state: RecordState;
  outcome: RecordOutcome | null;
  result: string | null;
  lease_expires_ms: number | null;
  expires_ms: number;
  created_ms: number;
  read_ms: number;
}

/** What the one-statement claim returns: our token, or the record that stands (S7). */
export interface ClaimRow extends Partial<RecordRow> {
  claimed_token: string | null;
  /** Whether the record may be claimed over, by the same clock reading as `read_ms`. */
  eligible: boolean | null;
}

export type Queries = ReturnType<typeof buildQueries>;

const p = (name: string) => sql.placeholder(name);
/** A placeholder of milliseconds as a Postgres interval, for arithmetic on the database clock. */
const interval = (name: string) => sql`(${p(name)}::double precision * interval '1 millisecond')`;
/** A timestamptz as epoch milliseconds: the same number on every driver (they return text). */
const epochMs = (expression: SQL) => sql`(extract(epoch from ${expression}) * 1000)::float8`;

/** The rule above, at the clock reading `now`. */
const claimable = (now: SQL) => sql`(expires_at <= ${now}
  or (state = 'in_flight' and lease_expires_at <= ${now} and fingerprint = ${p('fingerprint')}))`;

export function buildQueries(t: PgIdempotencyTable, { asyncClaim }: { asyncClaim: boolean }) {
  const dialect = new PgDialect();
  const build = (query: SQL): Query => dialect.sqlToQuery(query);
  const byKey = sql`scope = ${p('scope')} and key = ${p('key')}`;
  /** The fence: the record is in flight under our token (SPEC S8). */
  const held = sql`${byKey} and token = ${p('token')} and state = 'in_flight'`;
  /** A record's columns (RecordRow), `readAt` being one reading of the database clock. */
  const record = (readAt: SQL) => sql`fingerprint, operation, state, outcome, result,
    ${epochMs(sql`lease_expires_at`)} as lease_expires_ms,
    ${epochMs(sql`expires_at`)} as expires_ms,
    ${epochMs(sql`created_at`)} as created_ms,
    ${epochMs(readAt)} as read_ms`;
  return {
    /**
     * S7 in one round trip: inserts our claim, or, when (scope, key) exists, returns the
     * record that stands, read with the database clock, and whether it may be taken over
     * (the takeover statement's conditions, by that same clock reading). The read sees the
     * statement's snapshot: a conflicting row committed after it was taken (a concurrent
     * claim the insert waited for) or deleted meanwhile yields no row at all.
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
     * `set_config(..., true)` lasts for this statement's own transaction only; it sits in
     * the INSERT's source and is filtered on, so that it is really evaluated (a SELECT CTE
     * that nothing references would never run).
     */
    claimOrRead: build(sql`
      with ins as (
        insert into ${t} as r (scope, key, fingerprint, operation, state, token,
          lease_expires_at, expires_at, created_at)
        select ${p('scope')}, ${p('key')}, ${p('fingerprint')}, ${p('operation')}, 'in_flight',
          ${p('token')}, c.at + ${interval('leaseMs')}, c.at + ${interval('expiresMs')}, c.at
        from (
          select clock_timestamp() as at,
            ${asyncClaim ? sql`set_config('synchronous_commit', 'off', true)` : sql`'unchanged'`} as commit_mode
        ) c
        where c.commit_mode is not null
        on conflict (scope, key) do nothing
        returning r.token
      )
      select ins.token as claimed_token, null::boolean as eligible,
        null::text as fingerprint, null::text as operation, null::text as state,
        null::text as outcome, null::text as result, null::float8 as lease_expires_ms,
        null::float8 as expires_ms, null::float8 as created_ms, null::float8 as read_ms
      from ins
      union all
      select null, ${claimable(sql`k.read_at`)}, ${record(sql`k.read_at`)}
      from ${t} cross join (select clock_timestamp() as read_at) k
      where ${byKey} and not exists (select 1 from ins)`),

    /**
     * S11/S14: claims over a record the rule at the top allows, as one compare-and-set that
     * re-checks the rule itself (the record may have changed since the claim read it: only
     * a race gets here with a record of another fingerprint, and it must find nothing). SKIP LOCKED: the
     * original's business transaction holds its row lock for its whole life, so while it
     * runs nothing is taken over, and the caller answers at once instead of blocking.
     */
    takeOver: build(sql`
      with target as (
        select scope, key, state from ${t}
        where ${byKey}
          and ${claimable(sql`clock_timestamp()`)}
        for update skip locked
      )
      update ${t} as record set
        token = ${p('token')},
        state = 'in_flight',
        fingerprint = ${p('fingerprint')},
        operation = ${p('operation')},
        outcome = null,
        result = null,
        lease_expires_at = clock_timestamp() + ${interval('leaseMs')},
        expires_at = clock_timestamp() + ${interval('expiresMs')},
        created_at = clock_timestamp(),
        completed_at = null
      from target
      where record.scope = target.scope and record.key = target.key
      returning target.state as previous_state`),

    read: build(sql`select ${record(sql`clock_timestamp()`)} from ${t} where ${byKey}`),

    /** S8/S11: the fence, locked for the business transaction's life. */
    lock: build(sql`select ${record(sql`clock_timestamp()`)} from ${t} where ${held} for update`),

    complete: build(sql`
      update ${t} set
        state = 'complete',
        outcome = ${p('outcome')},
        result = ${p('result')},
        completed_at = clock_timestamp(),
        expires_at = clock_timestamp() + ${interval('retentionMs')},
        lease_expires_at = null
      where ${held}
      returning 1 as done`),

    release: build(sql`delete from ${t} where ${held} returning 1 as done`),

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
        delete from ${t} where ctid = any(array(
          select ctid from ${t}
          where expires_at <= (select clock_timestamp())
          limit ${p('batchSize')}
          for update skip locked
        ))
        returning 1
      )
      select count(*)::int as count from deleted`),
  };
}
