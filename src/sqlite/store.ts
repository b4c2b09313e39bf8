/**
 * The SQLite store (SPEC S23): Drizzle on one better-sqlite3 connection, for development and
 * single-process use. Postgres is the store for many processes.
 *
 * better-sqlite3 transactions are synchronous and Drizzle's async transaction callback
 * commits at its first await, so the store runs the transaction itself: BEGIN IMMEDIATE ...
 * COMMIT on the raw connection, with every store operation queued on one lock per connection
 * (lock.ts) so that nothing else's statements slip into an open transaction.
 *
 * Its own statements are raw better-sqlite3 statements on `db.$client`, prepared once per
 * store (statements.ts). Because the lock keeps our connection's other statements out,
 * a claim that conflicts reads the row and only then runs the one takeover it is eligible
 * for; that UPDATE still carries all its conditions, so another process sharing the file
 * cannot slip a change in between.
 *
 * Guarded calls go through `claimAndRun` (one-transaction.ts, S11's second model): the claim,
 * the work and the complete record in one BEGIN IMMEDIATE ... COMMIT. The lease primitives
 * below (`claim`, `transaction`, `complete`, `release`) stay for records an earlier version
 * left in flight, for the seam's conformance suite and for custom guards.
 *
 * S10: only writes queue on the lock. A claim or read first looks at what is known without
 * queuing (ledger.ts): a claim live work in this process holds answers 409 at once, and a
 * committed record that stands (complete and unexpired, or in flight under a live lease) is
 * read between the statements of whatever transaction is open, so replays never wait behind
 * unrelated work. Only a claim that must write (absent, expired, lease over) queues.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { getTableName } from 'drizzle-orm';
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
import { configureConnection, type SqliteDatabase } from './db.js';
import { connectionLedger, heldRecord } from './ledger.js';
import { connectionLock } from './lock.js';
import { claimDatabaseFile } from './one-connection.js';
import { oneTransactionClaim } from './one-transaction.js';
import { verdictOn } from './row-verdict.js';
import { explainSetupError } from './setup-errors.js';
import { prepareStatements, type Statements } from './statements.js';
import {
  idempotencyRecords,
  type SqliteIdempotencyTable,
  sqliteIdempotencyTable,
} from './table.js';
import { undo } from './undo.js';

export interface SqliteStoreOptions {
  /**
   * The records table: one built with `sqliteIdempotencyTable(name)`, or just its name. It must
   * exist: create it with `migrateSqlite(db, { table })` or your own drizzle-kit migration.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: SqliteIdempotencyTable | string;
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

/** A claim retries when the record it conflicted with vanished or changed under it. */
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
): IdempotencyStore<SqliteDatabase<TSchema>> & StoreExtras {
  const table =
    typeof options.table === 'string'
      ? sqliteIdempotencyTable(options.table)
      : (options.table ?? idempotencyRecords);
  const now = options.now ?? Date.now;
  const client: Database = db.$client;
  const tableName = getTableName(table);
  const lock = connectionLock(client);
  const ledger = connectionLedger(client);
  claimDatabaseFile(client);
  configureConnection(client, options.busyTimeoutMs ?? 5000);

  // Prepared on first use, not here: an app may create the store before it migrates, and a
  // statement on a missing table fails to prepare (and says so: setup-errors.ts). Every use
  // runs under the connection lock.
  let prepared: Statements | undefined;
  const statements = (): Statements => {
    try {
      prepared ??= prepareStatements(client, table);
    } catch (error) {
      throw explainSetupError(error, tableName);
    }
    return prepared;
  };

  /**
   * One attempt at S7's claim; `undefined` when the record vanished or changed between our
   * statements (possible only through another connection: ours is under the lock).
   */
  function tryClaim(request: ClaimRequest): ClaimResult | undefined {
    const s = statements();
    const at = millis(now());
    const token = randomUUID();
    const lease = millis(at + request.leaseMs);
    const expires = millis(at + request.leaseMs + request.retentionMs);
    const { scope, key, fingerprint, operation } = request;
    const claim = [fingerprint, operation, token, lease, expires, at] as const;
    const claimed = (takenOver: boolean): ClaimResult => {
      ledger.wrote(tableName, request, client.inTransaction);
      ledger.hold(tableName, request, {
        token,
        fingerprint,
        operation,
        leaseExpiresAt: lease,
        expiresAt: expires,
        createdAt: at,
        running: false,
      });
      return { status: 'claimed', token, takenOver };
    };
    if (s.insert.run(scope, key, ...claim).changes === 1) return claimed(false);

    // The lock keeps our own connection's statements out, so reading first is enough to
    // decide; each takeover still carries its full conditions (a compare-and-set), so it
    // stays atomic against another process sharing the file.
    const row = s.select.get(scope, key);
    if (!row) return undefined;
    const verdict = verdictOn(row, fingerprint, at);
    if (verdict === 'take-over') {
      const taken = s.takeOver.run(...claim, scope, key, at, fingerprint, at).changes === 1;
      return taken ? claimed(true) : undefined;
    }
    if (verdict === 'reuse') {
      const reused = s.reuse.run(...claim, scope, key, at).changes === 1;
      return reused ? claimed(false) : undefined;
    }
    return { status: 'exists', record: toStoredRecord(request, row, at) };
  }

  function readRow(record: RecordKey): StoredRecord | undefined {
    const row = statements().select.get(record.scope, record.key);
    return row ? toStoredRecord(record, row, millis(now())) : undefined;
  }

  /**
   * S10: the record as known without queuing: a claim live work here holds, or the row read
   * now, between the statements of any open transaction, if that transaction has not written
   * it (so the read sees committed data). `undefined`: ask under the lock. A failing read (a
   * closed connection, say) is left to the queued path, which fails closed (S15).
   */
  function readWithoutQueuing(record: RecordKey): Known | undefined {
    const at = millis(now());
    const held = ledger.held(tableName, record, at);
    if (held) return { record: heldRecord(record, held, at), stands: true };
    if (!ledger.readsCommitted(tableName, record, client.inTransaction)) return undefined;
    let stored: StoredRecord | undefined;
    try {
      stored = readRow(record);
    } catch {
      return undefined;
    }
    return { record: stored, stands: stored !== undefined && stands(stored) };
  }

  return {
    dialect: 'sqlite',

    claimAndRun: oneTransactionClaim({
      client,
      tx: db,
      tableName,
      lock,
      ledger,
      statements,
      now: () => millis(now()),
      standing(request) {
        const known = readWithoutQueuing(request);
        return known?.stands && known.record
          ? { status: 'exists', record: known.record }
          : undefined;
      },
    }),

    claim(request) {
      // An idle lock runs the claim at once; only a busy one is worth answering around.
      const known = lock.busy ? readWithoutQueuing(request) : undefined;
      if (known?.stands && known.record) {
        return Promise.resolve({ status: 'exists', record: known.record });
      }
      return lock.run(() => {
        for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
          const result = tryClaim(request);
          if (result) return result;
        }
        throw new Error(
          `sqliteStore: the record kept changing during ${CLAIM_ATTEMPTS} claim attempts.`,
        );
      });
    },

    read(record: RecordKey) {
      const known = lock.busy ? readWithoutQueuing(record) : undefined;
      if (known) return Promise.resolve(known.record);
      return lock.run(() => readRow(record));
    },

    transaction(fence, work) {
      return lock.transaction(async ({ depth, enter }) => {
        const s = statements();
        // A guarded call nested in guarded work is part of the outer transaction: a savepoint.
        const savepoint = depth > 1 ? `mutation_guard_${depth}` : undefined;
        ledger.setRunning(tableName, fence, fence.token, true);
        try {
          if (savepoint) client.exec(`SAVEPOINT ${savepoint}`);
          else s.begin.run();
          try {
            // Is the claim still ours? The transaction's write lock then keeps it so.
            if (s.holds.get(fence.scope, fence.key, fence.token) === undefined) {
              throw new LeaseLostError();
            }
            const value = await enter(() => work(db));
            if (savepoint) client.exec(`RELEASE ${savepoint}`);
            else s.commit.run();
            return value;
          } catch (error) {
            undo(client, savepoint);
            throw error;
          }
        } finally {
          // In the same synchronous step as COMMIT or ROLLBACK: from here on the record is
          // read from the table (complete, or in flight until the guard releases it).
          ledger.drop(tableName, fence, fence.token);
          if (!savepoint) ledger.transactionEnded();
        }
      });
    },

    complete(fence: Fence, completion: CompletionRecord, tx) {
      // With `tx` we are (or should be) inside `transaction`, which holds the lock already.
      return lock.run(
        () => {
          const at = millis(now());
          // Complete (or, if this transaction rolls back, in flight as the table says).
          ledger.drop(tableName, fence, fence.token);
          ledger.wrote(tableName, fence, client.inTransaction);
          const { changes } = statements().complete.run(
            completion.outcome,
            completion.result,
            at,
            millis(at + completion.retentionMs),
            fence.scope,
            fence.key,
            fence.token,
          );
          return changes === 1;
        },
        { joinOpenTransaction: tx !== undefined },
      );
    },

    release(fence) {
      return lock.run(() => {
        ledger.drop(tableName, fence, fence.token);
        ledger.wrote(tableName, fence, client.inTransaction);
        return statements().release.run(fence.scope, fence.key, fence.token).changes === 1;
      });
    },

    async purge(options: PurgeOptions) {
      assertPurgeOptions(options);
      const { batchSize, maxBatches } = options;
      const cutoff = millis(now());
      let total = 0;
      // One lock turn per batch, so guarded mutations interleave with a long purge.
      for (let batch = 0; batch < maxBatches; batch++) {
        const deleted = await lock.run(() => {
          ledger.wrote(tableName, undefined, client.inTransaction);
          return statements().purge.run(cutoff, batchSize).changes;
        });
        total += deleted;
        if (deleted < batchSize) break;
      }
      return total;
    },
  };
}

/** What a claim or read learnt without queuing on the lock. */
interface Known {
  record: StoredRecord | undefined;
  /** A claim could not change it, so it is the answer: held by live work, or S9/S10 below. */
  stands: boolean;
}

/** A record that a claim could not change: complete and unexpired, or under a live lease. */
function stands(record: StoredRecord): boolean {
  const at = record.readAt.getTime();
  if (record.state === 'complete') return record.expiresAt.getTime() > at;
  return record.leaseExpiresAt !== null && record.leaseExpiresAt.getTime() > at;
}

/** A time as the table stores it: whole milliseconds, as Drizzle's `timestamp_ms` would. */
function millis(ms: number): number {
  return Math.trunc(ms);
}
