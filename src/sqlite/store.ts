/**
 * The SQLite store (SPEC S23): Drizzle on one better-sqlite3 connection, for development and
 * single-process use. Postgres is the store for many processes.
 *
 * better-sqlite3 transactions are synchronous and Drizzle's async transaction callback
 * commits at its first await, so the store runs the transaction itself: BEGIN IMMEDIATE ...
 * COMMIT on the raw connection, with every store operation queued on one lock per connection
 * (lock.ts) so that nothing else's statements slip into an open transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { and, eq, inArray, lte, or, sql } from 'drizzle-orm';
import {
  type ClaimRequest,
  type ClaimResult,
  type CompletionRecord,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type PurgeOptions,
  type RecordKey,
} from '../store.js';
import { configureConnection, type SqliteDatabase } from './connection.js';
import { connectionLock } from './lock.js';
import { toStoredRecord } from './records.js';
import { idempotencyRecords, type SqliteIdempotencyTable } from './table.js';

export interface SqliteStoreOptions {
  /**
   * The idempotency table, from `sqliteIdempotencyTable(name)`; apply its migration with
   * `migrateSqlite(db, { table: name })` or through your own drizzle-kit schema.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: SqliteIdempotencyTable;
  /**
   * The clock leases and retention are measured on, in milliseconds since the epoch. SQLite
   * runs in this process, so the process clock is the database's clock; tests inject one.
   * @default Date.now
   */
  now?: () => number;
  /**
   * How long a write waits for another process's write lock before failing (and the guard
   * answering 503, SPEC S15).
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** A claim retries when the record it conflicted with vanished before it could be read. */
const CLAIM_ATTEMPTS = 3;

/**
 * Creates the SQLite store. Guarded work receives `db` itself as its transaction handle:
 * write through it (or `db.$client`) and the writes commit with the stored result.
 *
 * While a guarded mutation runs, other store operations on this connection wait for it, and
 * so should the app's own writes on `db`: a statement issued outside the guard during a
 * guarded transaction becomes part of it.
 */
export function sqliteStore<TSchema extends Record<string, unknown> = Record<string, never>>(
  db: SqliteDatabase<TSchema>,
  options: SqliteStoreOptions = {},
): IdempotencyStore<SqliteDatabase<TSchema>> {
  const table = options.table ?? idempotencyRecords;
  const now = options.now ?? Date.now;
  const client: Database = db.$client;
  const lock = connectionLock(client);
  configureConnection(client, options.busyTimeoutMs ?? 5000);

  const byKey = ({ scope, key }: RecordKey) => and(eq(table.scope, scope), eq(table.key, key));
  /** The fence: the record is in flight under our token (SPEC S8). */
  const held = (fence: Fence) =>
    and(byKey(fence), eq(table.token, fence.token), eq(table.state, 'in_flight'));

  function readRow(record: RecordKey) {
    return db.select().from(table).where(byKey(record)).get();
  }

  /** One attempt at S7's claim; `undefined` when the record vanished between statements. */
  function tryClaim(request: ClaimRequest): ClaimResult | undefined {
    const at = now();
    const token = randomUUID();
    const claim = {
      fingerprint: request.fingerprint,
      operation: request.operation,
      state: 'in_flight' as const,
      token,
      outcome: null,
      result: null,
      leaseExpiresAt: new Date(at + request.leaseMs),
      expiresAt: new Date(at + request.leaseMs + request.retentionMs),
      createdAt: new Date(at),
      completedAt: null,
    };
    const inserted = db
      .insert(table)
      .values({ scope: request.scope, key: request.key, ...claim })
      .onConflictDoNothing({ target: [table.scope, table.key] })
      .returning({ token: table.token })
      .all();
    if (inserted.length === 1) return { status: 'claimed', token, takenOver: false };

    // Each takeover is a compare-and-set carrying its conditions, so it is atomic on its own
    // even against another process; the lock only spares us reading first.
    const expired = lte(table.expiresAt, new Date(at));
    const leaseOver = lte(table.leaseExpiresAt, new Date(at));
    // S11: an in-flight claim whose lease ran out, same request only (S6). One past its whole
    // expiry (its process died long ago) counts as absent, as purge would make it.
    const takeover = db
      .update(table)
      .set(claim)
      .where(
        and(
          byKey(request),
          eq(table.state, 'in_flight'),
          leaseOver,
          or(eq(table.fingerprint, request.fingerprint), expired),
        ),
      )
      .run();
    if (takeover.changes === 1) return { status: 'claimed', token, takenOver: true };

    // S14: a complete record past its retention counts as absent, whatever its fingerprint.
    const reuse = db
      .update(table)
      .set(claim)
      .where(and(byKey(request), eq(table.state, 'complete'), expired))
      .run();
    if (reuse.changes === 1) return { status: 'claimed', token, takenOver: false };

    const row = readRow(request);
    return row ? { status: 'exists', record: toStoredRecord(row, at) } : undefined;
  }

  /** Is the claim still ours? Run inside the transaction, whose write lock then keeps it so. */
  function holds(fence: Fence): boolean {
    return db.select({ token: table.token }).from(table).where(held(fence)).get() !== undefined;
  }

  return {
    dialect: 'sqlite',

    claim(request) {
      return lock.run(() => {
        for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
          const result = tryClaim(request);
          if (result) return result;
        }
        throw new Error(
          `sqliteStore: the record kept vanishing during ${CLAIM_ATTEMPTS} claim attempts.`,
        );
      });
    },

    read(record) {
      return lock.run(() => {
        const row = readRow(record);
        return row ? toStoredRecord(row, now()) : undefined;
      });
    },

    transaction(fence, work) {
      return lock.transaction(async ({ depth, enter }) => {
        // A guarded call nested in guarded work is part of the outer transaction: a savepoint.
        const savepoint = depth > 1 ? `mutation_guard_${depth}` : undefined;
        client.exec(savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN IMMEDIATE');
        try {
          if (!holds(fence)) throw new LeaseLostError();
          const value = await enter(() => work(db));
          client.exec(savepoint ? `RELEASE ${savepoint}` : 'COMMIT');
          return value;
        } catch (error) {
          undo(client, savepoint);
          throw error;
        }
      });
    },

    complete(fence, completion: CompletionRecord, tx) {
      // With `tx` we are (or should be) inside `transaction`, which holds the lock already.
      return lock.run(
        () => {
          const at = now();
          const { changes } = db
            .update(table)
            .set({
              state: 'complete',
              outcome: completion.outcome,
              result: completion.result,
              completedAt: new Date(at),
              expiresAt: new Date(at + completion.retentionMs),
              leaseExpiresAt: null,
            })
            .where(held(fence))
            .run();
          return changes === 1;
        },
        { joinOpenTransaction: tx !== undefined },
      );
    },

    release(fence) {
      return lock.run(() => db.delete(table).where(held(fence)).run().changes === 1);
    },

    async purge({ batchSize, maxBatches }: PurgeOptions) {
      if (!Number.isInteger(batchSize) || batchSize < 1) {
        throw new TypeError(`purge: \`batchSize\` must be a positive integer, got ${batchSize}.`);
      }
      const cutoff = new Date(now());
      let total = 0;
      // One lock turn per batch, so guarded mutations interleave with a long purge.
      for (let batch = 0; batch < maxBatches; batch++) {
        const deleted = await lock.run(() => {
          const expired = db
            .select({ rowid: sql<number>`rowid` })
            .from(table)
            .where(lte(table.expiresAt, cutoff))
            .limit(batchSize);
          return db.delete(table).where(inArray(sql`rowid`, expired)).run().changes;
        });
        total += deleted;
        if (deleted < batchSize) break;
      }
      return total;
    },
  };
}

/**
 * Rolls back after a failure. The work's error is what the caller needs, so a failing
 * rollback (SQLite may already have rolled back on its own) must not replace it.
 */
function undo(client: Database, savepoint: string | undefined): void {
  if (!client.inTransaction) return;
  try {
    if (savepoint) {
      client.exec(`ROLLBACK TO ${savepoint}`);
      client.exec(`RELEASE ${savepoint}`);
    } else {
      client.exec('ROLLBACK');
    }
  } catch {
    // Nothing better to do: the original error is rethrown by the caller.
  }
}
