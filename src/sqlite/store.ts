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
 * store (statements.ts). A guarded call is one transaction (one-transaction.ts): the claim,
 * the work and the complete record in one BEGIN IMMEDIATE ... COMMIT.
 *
 * S10: only writes queue on the lock. A claim or read first looks at what is known without
 * queuing (ledger.ts): a key live work in this process holds answers 409 (or 422) at once,
 * and a complete, unexpired record is read between the statements of whatever transaction is
 * open, so replays never wait behind unrelated work. Only a claim that must write (absent or
 * expired) queues.
 */
import type { Database } from 'better-sqlite3';
import { getTableName } from 'drizzle-orm';
import { assertPurgeOptions } from '../store/purge-options.js';
import { toStoredRecord } from '../store/records.js';
import type {
  ClaimAndRunResult,
  IdempotencyStore,
  PurgeOptions,
  RecordKey,
  StoredRecord,
  StoreExtras,
} from '../store/seam.js';
import { configureConnection, type SqliteDatabase } from './db.js';
import { connectionLedger } from './ledger.js';
import { connectionLock } from './lock.js';
import { claimDatabaseFile } from './one-connection.js';
import { oneTransactionClaim } from './one-transaction.js';
import { explainSetupError } from './setup-errors.js';
import { prepareStatements, type Statements } from './statements.js';
import {
  idempotencyRecords,
  type SqliteIdempotencyTable,
  sqliteIdempotencyTable,
} from './table.js';

export interface SqliteStoreOptions {
  /**
   * The records table: one built with `sqliteIdempotencyTable(name)`, or just its name. It must
   * exist: create it with `migrateSqlite(db, { table })` or your own drizzle-kit migration.
   * @default idempotencyRecords (the table `idempotency_records`)
   */
  table?: SqliteIdempotencyTable | string;
  /**
   * The clock retention is measured on, in milliseconds since the epoch. SQLite
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

  function readRow(record: RecordKey): StoredRecord | undefined {
    const row = statements().select.get(record.scope, record.key);
    return row ? toStoredRecord(record, row, millis(now())) : undefined;
  }

  /**
   * S10: the answer known without queuing: a key live work here holds (in flight), or the
   * complete, unexpired record read now, between the statements of any open transaction, if
   * that transaction has not written it (so the read sees committed data). `undefined`: ask
   * under the lock. A failing read (a closed connection, say) is left to the queued path,
   * which fails closed (S15).
   */
  function answerWithoutQueuing(record: RecordKey & { fingerprint: string }) {
    const at = millis(now());
    const held = ledger.held(tableName, record);
    if (held) {
      return {
        status: 'in_flight',
        sameRequest: held.fingerprint === record.fingerprint,
        runningMs: at - held.claimedAt,
      } satisfies ClaimAndRunResult<never>;
    }
    const stored = readCommitted(record)?.record;
    if (stored && stored.expiresAt.getTime() > at) {
      return { status: 'exists', record: stored } satisfies ClaimAndRunResult<never>;
    }
    return undefined;
  }

  /** The record read now without queuing, if that read sees only committed data. */
  function readCommitted(record: RecordKey): { record: StoredRecord | undefined } | undefined {
    if (!ledger.readsCommitted(tableName, record, client.inTransaction)) return undefined;
    try {
      return { record: readRow(record) };
    } catch {
      return undefined;
    }
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
      standing: answerWithoutQueuing,
    }),

    read(record: RecordKey) {
      const known = lock.busy ? readCommitted(record) : undefined;
      if (known) return Promise.resolve(known.record);
      return lock.run(() => readRow(record));
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

/** A time as the table stores it: whole milliseconds, as Drizzle's `timestamp_ms` would. */
function millis(ms: number): number {
  return Math.trunc(ms);
}
