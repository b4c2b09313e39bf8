/**
 * The Postgres store (SPEC S24): many processes, one database, READ COMMITTED.
 *
 * How the rules of src/store.ts are met:
 * - claim (S7) is `INSERT ... ON CONFLICT DO NOTHING`, committed on its own before the business
 *   transaction begins. (Were it inside that transaction, a concurrent claim's ON CONFLICT
 *   would block on the uncommitted row until the whole mutation ended.)
 * - a takeover (S11) is one compare-and-set UPDATE whose target is selected
 *   `FOR UPDATE SKIP LOCKED`: the original's business transaction holds a row lock on its
 *   record for its whole life, so while it runs the takeover skips the row and the caller
 *   sees "exists" at once (409, S10) instead of blocking on the lock.
 * - transaction (S8) locks the record `FOR UPDATE` where token and state still match, or
 *   throws LeaseLostError without running the work; complete/release are fenced by token.
 * - every time is the database's clock (`clock_timestamp()`), never the app server's (S11).
 *
 * The one wait left: between the work's fenced `complete` (an UPDATE inside the business
 * transaction) and its COMMIT, a concurrent claim's ON CONFLICT check waits for that commit.
 * That window is the commit itself, not the mutation, so it is not worth avoiding.
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
import { and, eq, type SQL, sql } from 'drizzle-orm';
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
} from '../store.js';
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

/** `ms` milliseconds as a Postgres interval, for arithmetic on the database's clock. */
function millis(ms: number): SQL {
  return sql`(${ms}::double precision * interval '1 millisecond')`;
}

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

  const whereKey = ({ scope, key }: RecordKey) => and(eq(t.scope, scope), eq(t.key, key));
  const whereFence = (fence: Fence) =>
    and(whereKey(fence), eq(t.token, fence.token), eq(t.state, 'in_flight'));

  async function insert(request: ClaimRequest, token: string): Promise<boolean> {
    const rows = await db
      .insert(t)
      .values({
        scope: request.scope,
        key: request.key,
        fingerprint: request.fingerprint,
        operation: request.operation,
        state: 'in_flight',
        token,
        leaseExpiresAt: sql`clock_timestamp() + ${millis(request.leaseMs)}`,
        expiresAt: sql`clock_timestamp() + ${millis(request.leaseMs + request.retentionMs)}`,
        createdAt: sql`clock_timestamp()`,
      })
      .onConflictDoNothing({ target: [t.scope, t.key] })
      .returning({ token: t.token });
    return rows.length === 1;
  }

  /**
   * Takes over an in-flight record of the same fingerprint whose lease expired, or a complete
   * record past its retention, in one statement. Returns the state it replaced, or undefined.
   */
  async function takeOver(request: ClaimRequest, token: string): Promise<string | undefined> {
    const result = await db.execute(sql`
      with target as (
        select scope, key, state from ${t}
        where scope = ${request.scope} and key = ${request.key}
          and (
            (state = 'in_flight' and lease_expires_at <= clock_timestamp()
              and fingerprint = ${request.fingerprint})
            or (state = 'complete' and expires_at <= clock_timestamp())
          )
        for update skip locked
      )
      update ${t} as record set
        token = ${token},
        state = 'in_flight',
        fingerprint = ${request.fingerprint},
        operation = ${request.operation},
        outcome = null,
        result = null,
        lease_expires_at = clock_timestamp() + ${millis(request.leaseMs)},
        expires_at = clock_timestamp() + ${millis(request.leaseMs + request.retentionMs)},
        created_at = clock_timestamp(),
        completed_at = null
      from target
      where record.scope = target.scope and record.key = target.key
      returning target.state as previous_state`);
    return rowsOf<{ previous_state: string }>(result)[0]?.previous_state;
  }

  async function read(record: RecordKey): Promise<StoredRecord | undefined> {
    const rows = await db
      .select({
        scope: t.scope,
        key: t.key,
        fingerprint: t.fingerprint,
        operation: t.operation,
        state: t.state,
        outcome: t.outcome,
        result: t.result,
        leaseExpiresAt: t.leaseExpiresAt,
        expiresAt: t.expiresAt,
        // The guard compares the record's times with this, never with its own clock (S11).
        readAt: sql`clock_timestamp()`.mapWith(t.expiresAt),
      })
      .from(t)
      .where(whereKey(record))
      .limit(1);
    return rows[0];
  }

  return {
    dialect: 'postgres',

    async claim(request: ClaimRequest): Promise<ClaimResult> {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const token = randomUUID();
        if (await insert(request, token)) return { status: 'claimed', token, takenOver: false };
        const previous = await takeOver(request, token);
        if (previous !== undefined) {
          return { status: 'claimed', token, takenOver: previous === 'in_flight' };
        }
        const record = await read(request);
        if (record) return { status: 'exists', record };
        // Released or purged between our statements: try again from the insert.
      }
      throw new Error(
        `mutation-guard/postgres: could not claim or read the record after ${CLAIM_ATTEMPTS} attempts.`,
      );
    },

    read,

    transaction<T>(fence: Fence, work: (tx: Tx) => Promise<T>): Promise<T> {
      return db.transaction(
        async (tx) => {
          // Holding this row lock until commit is what keeps a takeover out while we run (S11).
          const held = await tx
            .select({ token: t.token })
            .from(t)
            .where(whereFence(fence))
            .for('update');
          if (held.length !== 1) throw new LeaseLostError();
          return work(tx as Tx);
        },
        { isolationLevel: 'read committed' },
      );
    },

    async complete(fence: Fence, completion: CompletionRecord, tx?: Tx): Promise<boolean> {
      const target = (tx ?? db) as AnyPgDatabase;
      const rows = await target
        .update(t)
        .set({
          state: 'complete',
          outcome: completion.outcome,
          result: completion.result,
          completedAt: sql`clock_timestamp()`,
          expiresAt: sql`clock_timestamp() + ${millis(completion.retentionMs)}`,
          leaseExpiresAt: null,
        })
        .where(whereFence(fence))
        .returning({ token: t.token });
      return rows.length === 1;
    },

    async release(fence: Fence): Promise<boolean> {
      const rows = await db.delete(t).where(whereFence(fence)).returning({ token: t.token });
      return rows.length === 1;
    },

    async purge({ batchSize, maxBatches }: PurgeOptions): Promise<number> {
      let total = 0;
      for (let batch = 0; batch < maxBatches; batch++) {
        // Bounded batches keep each statement's locks short; SKIP LOCKED leaves rows that a
        // claim is taking over (or another purger is deleting) alone (S14).
        const result = await db.execute(sql`
          with deleted as (
            delete from ${t} where ctid in (
              select ctid from ${t}
              where expires_at <= clock_timestamp()
              limit ${batchSize}
              for update skip locked
            )
            returning 1
          )
          select count(*)::int as count from deleted`);
        const count = Number(rowsOf<{ count: number }>(result)[0]?.count ?? 0);
        total += count;
        if (count < batchSize) break;
      }
      return total;
    },
  };
}
