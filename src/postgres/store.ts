/**
 * The Postgres store (SPEC S24): many processes, one database, READ COMMITTED.
 *
 * How the rules of src/store.ts are met:
 * - claim (S7) is `INSERT ... ON CONFLICT DO NOTHING`, committed on its own before the business
 *   transaction begins. (Were it inside that transaction, a concurrent claim's ON CONFLICT
 *   would block on the uncommitted row until the whole mutation ended.) The same statement
 *   returns the conflicting record, read on the database clock, so that a fresh call and a
 *   replay are one round trip each. Its commit is asynchronous: see `claimOrRead` for why
 *   losing it in a crash is harmless.
 * - a takeover (S11) is one compare-and-set UPDATE whose target is selected
 *   `FOR UPDATE SKIP LOCKED`, run only when the claim statement found the record eligible:
 *   the original's business transaction holds a row lock on its record for its whole life,
 *   so while it runs the takeover skips the row and the caller sees "exists" at once (409,
 *   S10) instead of blocking on the lock.
 * - transaction (S8) locks the record `FOR UPDATE` where token and state still match, or
 *   throws LeaseLostError without running the work; complete/release are fenced by token.
 * - every time is the database's clock (`clock_timestamp()`), never the app server's (S11).
 * - every statement's SQL is built once per store (buildQueries); a call only fills in values.
 *
 * The one wait left: between the work's fenced `complete` (an UPDATE inside the business
 * transaction) and its COMMIT, a concurrent claim's ON CONFLICT check waits for that commit.
 * That window is the commit itself, not the mutation, so it is not worth avoiding. Such a
 * claim reads the record as its statement's snapshot saw it, still in flight: it answers 409
 * (or, with `wait`, looks again and replays), where a read after the wait would replay.
 *
 * Isolation: our transactions always run READ COMMITTED, whatever the server's
 * `default_transaction_isolation`, so a stricter default cannot make our own statements fail
 * with a serialization error (SQLSTATE 40001). The user's writes run in that same
 * READ COMMITTED transaction; should they still hit a serialization failure or deadlock, it
 * propagates as their error (the claim is released and a retry runs afresh).
 *
 * Drizzle wraps driver errors (the driver's error, with its SQLSTATE `code`, is on `cause`);
 * we let them propagate: the guard turns store failures into 503 (S15).
 */
import { randomUUID } from 'node:crypto';
import { is, type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgSession, PgTransaction } from 'drizzle-orm/pg-core';
import {
  type ClaimRequest,
  type ClaimResult,
  type CompletionRecord,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type PurgeOptions,
  type RecordKey,
  type RecordOutcome,
  type RecordState,
  type StoredRecord,
} from '../store.js';
import { absorbConnectionErrors, absorbPoolConnectionErrors } from './connection-errors.js';
import { type AnyPgDatabase, type PgTransactionOf, rowsOf } from './db.js';
import { idempotencyRecords, type PgIdempotencyTable, pgIdempotencyTable } from './table.js';

export interface PostgresStoreOptions {
  /**
   * The records table: one built with `pgIdempotencyTable(name)`, or just its name. It must
   * exist: create it with `migratePostgres(db, { table })` or your own drizzle-kit migration.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: PgIdempotencyTable | string;
}

/** A claim that lost every race in a row (a record deleted between our statements). */
const CLAIM_ATTEMPTS = 5;

/** A record's columns as our statements return them: times as epoch milliseconds (float8). */
interface RecordRow {
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
interface ClaimRow extends Partial<RecordRow> {
  claimed_token: string | null;
  /** Whether the record may be taken over, by the same clock reading as `read_ms` (S11). */
  eligible: boolean | null;
}

const p = (name: string) => sql.placeholder(name);
/** A placeholder of milliseconds as a Postgres interval, for arithmetic on the database clock. */
const interval = (name: string) => sql`(${p(name)}::double precision * interval '1 millisecond')`;
/** A timestamptz as epoch milliseconds: the same number on every driver (they return text). */
const epochMs = (expression: SQL) => sql`(extract(epoch from ${expression}) * 1000)::float8`;

/**
 * Creates the Postgres store for a Drizzle database on node-postgres, postgres.js or PGlite.
 * The guarded work receives `db.transaction`'s own transaction handle, typed for your `db`.
 */
export function postgresStore<Db extends AnyPgDatabase>(
  db: Db,
  options: PostgresStoreOptions = {},
): IdempotencyStore<PgTransactionOf<Db>> {
  type Tx = PgTransactionOf<Db>;
  const t =
    typeof options.table === 'string'
      ? pgIdempotencyTable(options.table)
      : (options.table ?? idempotencyRecords);
  // A claim of its own commits asynchronously (see `claimOrRead`); not when `db` is itself a
  // transaction, whose commit (the app's writes with it) the setting would weaken.
  const q = buildQueries(t, { asyncClaim: !is(db, PgTransaction) });
  absorbPoolConnectionErrors(db);

  /**
   * Statements on `db` itself are prepared (client-side: SQL and parameter order) once; those
   * inside a transaction once per transaction, on its connection's session.
   */
  type Prepared = ReturnType<PgSession['prepareQuery']>;
  const prepare = (handle: AnyPgDatabase, query: Query): Prepared =>
    (handle._.session as PgSession).prepareQuery(query, undefined, undefined, false);
  const onDb = {
    claimOrRead: prepare(db, q.claimOrRead),
    takeOver: prepare(db, q.takeOver),
    read: prepare(db, q.read),
    complete: prepare(db, q.complete),
    release: prepare(db, q.release),
    purge: prepare(db, q.purge),
  };
  async function run<Row>(statement: Prepared, values: Record<string, unknown>): Promise<Row[]> {
    return rowsOf<Row>(await statement.execute(values));
  }

  async function read(record: RecordKey): Promise<StoredRecord | undefined> {
    const [row] = await run<RecordRow>(onDb.read, { scope: record.scope, key: record.key });
    return row ? toStoredRecord(record, row) : undefined;
  }

  /**
   * Takes over an in-flight record of the same fingerprint whose lease expired, or a complete
   * record past its retention, in one statement. Returns the state it replaced, or undefined.
   */
  async function takeOver(request: ClaimRequest, token: string): Promise<string | undefined> {
    const [row] = await run<{ previous_state: string }>(onDb.takeOver, claimValues(request, token));
    return row?.previous_state;
  }

  return {
    dialect: 'postgres',

    async claim(request: ClaimRequest): Promise<ClaimResult> {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const token = randomUUID();
        const [row] = await run<ClaimRow>(onDb.claimOrRead, claimValues(request, token));
        // No row: the conflicting row committed after this statement's snapshot was taken (a
        // concurrent claim we waited for), or it was deleted in between. Look again.
        if (!row) continue;
        if (row.claimed_token !== null) return { status: 'claimed', token, takenOver: false };
        if (row.eligible) {
          // Rare: an expired lease or retention. The CTE re-checks every condition itself.
          const previous = await takeOver(request, token);
          if (previous !== undefined) {
            return { status: 'claimed', token, takenOver: previous === 'in_flight' };
          }
          // Locked by its running original (S11), or changed since we read it: as it is now.
          const record = await read(request);
          if (record) return { status: 'exists', record };
          continue;
        }
        return { status: 'exists', record: toStoredRecord(request, row as RecordRow) };
      }
      throw new Error(
        `mutation-guard/postgres: could not claim or read the record after ${CLAIM_ATTEMPTS} attempts.`,
      );
    },

    read,

    transaction<T>(fence: Fence, work: (tx: Tx) => Promise<T>): Promise<T> {
      return db.transaction(
        async (tx) => {
          absorbConnectionErrors(tx);
          // Holding this row lock until commit is what keeps a takeover out while we run (S11).
          const held = await run(prepare(tx as AnyPgDatabase, q.lock), fenceValues(fence));
          if (held.length !== 1) throw new LeaseLostError();
          return work(tx as Tx);
        },
        { isolationLevel: 'read committed' },
      );
    },

    async complete(fence: Fence, completion: CompletionRecord, tx?: Tx): Promise<boolean> {
      const statement = tx ? prepare(tx as AnyPgDatabase, q.complete) : onDb.complete;
      const rows = await run(statement, {
        ...fenceValues(fence),
        outcome: completion.outcome,
        result: completion.result,
        retentionMs: completion.retentionMs,
      });
      return rows.length === 1;
    },

    async release(fence: Fence): Promise<boolean> {
      return (await run(onDb.release, fenceValues(fence))).length === 1;
    },

    async purge({ batchSize, maxBatches }: PurgeOptions): Promise<number> {
      let total = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        const [row] = await run<{ count: number }>(onDb.purge, { batchSize });
        const count = Number(row?.count ?? 0);
        total += count;
        if (count < batchSize) break;
      }
      return total;
    },
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

function toStoredRecord({ scope, key }: RecordKey, row: RecordRow): StoredRecord {
  return {
    scope,
    key,
    fingerprint: row.fingerprint,
    operation: row.operation,
    state: row.state,
    outcome: row.outcome,
    result: row.result,
    leaseExpiresAt: row.lease_expires_ms === null ? null : new Date(row.lease_expires_ms),
    expiresAt: new Date(row.expires_ms),
    createdAt: new Date(row.created_ms),
    // The guard compares the record's times with this, never with its own clock (S11).
    readAt: new Date(row.read_ms),
  };
}

/**
 * Every statement the store runs, built once per store (table name and all) with named
 * placeholders; each call only fills in its values. Unnamed statements, so nothing is
 * prepared on the server (which transaction-mode poolers such as PgBouncer cannot share).
 */
function buildQueries(t: PgIdempotencyTable, { asyncClaim }: { asyncClaim: boolean }) {
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
      select null, (
          (state = 'in_flight' and lease_expires_at <= k.read_at
            and fingerprint = ${p('fingerprint')})
          or (state = 'complete' and expires_at <= k.read_at)
        ), ${record(sql`k.read_at`)}
      from ${t} cross join (select clock_timestamp() as read_at) k
      where ${byKey} and not exists (select 1 from ins)`),

    /**
     * S11/S14: takes over an in-flight record of the same fingerprint whose lease expired,
     * or a complete record past its retention, as one compare-and-set. SKIP LOCKED: the
     * original's business transaction holds its row lock for its whole life, so while it
     * runs nothing is taken over, and the caller answers at once instead of blocking.
     */
    takeOver: build(sql`
      with target as (
        select scope, key, state from ${t}
        where ${byKey}
          and (
            (state = 'in_flight' and lease_expires_at <= clock_timestamp()
              and fingerprint = ${p('fingerprint')})
            or (state = 'complete' and expires_at <= clock_timestamp())
          )
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
    lock: build(sql`select 1 as held from ${t} where ${held} for update`),

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
     * claim is taking over (or another purger is deleting) alone.
     */
    purge: build(sql`
      with deleted as (
        delete from ${t} where ctid in (
          select ctid from ${t}
          where expires_at <= clock_timestamp()
          limit ${p('batchSize')}
          for update skip locked
        )
        returning 1
      )
      select count(*)::int as count from deleted`),
  };
}
