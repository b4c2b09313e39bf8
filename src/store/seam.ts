/**
 * The seam between the guard and a database. The guard (src/core/guard.ts) decides what
 * happens; a store persists, with one way to hold a key and a purge. `Tx` is the transaction
 * handle the guarded work receives: for the Drizzle stores, a Drizzle database bound to the
 * transaction.
 *
 * The seam is what the guard calls, and nothing more. What the shipped stores offer besides
 * (`read`, `dialect`: for tests, tools and logs) is `StoreExtras`. Store authors import
 * these types from `mutation-guard/store`.
 *
 * Rules every store meets (checked by the store conformance suite, test/conformance):
 * - records are unique on (scope, key) (SPEC S4);
 * - `claimAndRun` holds the key for its transaction's life, by something the database drops
 *   when that transaction or its connection ends, and never lets two callers both run the work
 *   of a key (S7, S11);
 * - the work's writes and the record commit together in that one transaction, and the record
 *   is written once, complete, by an insert that the unique constraint decides (S8);
 * - a record past its expiry counts as absent (S14), and time is measured on the database's
 *   clock where it has one (S11).
 */

/** Which record: unique on both parts together (SPEC S4). */
export interface RecordKey {
  scope: string;
  key: string;
}

export interface ClaimRequest extends RecordKey {
  fingerprint: string;
  /** The operation's name, kept for operators reading the table. */
  operation: string;
}

/** What happened to the business transaction of a record. */
export type RecordOutcome = 'committed' | 'rolled_back';

/** A record as it stands in the table: always complete (a key in flight has no row). */
export interface StoredRecord extends RecordKey {
  fingerprint: string;
  operation: string;
  outcome: RecordOutcome;
  /** The serialized result. */
  result: string;
  /** When the record stops counting and may be purged. */
  expiresAt: Date;
  /** When the key was claimed: the start of the transaction that wrote the record. */
  createdAt: Date;
  /** The store's clock when the record was read: compare the two dates above with this. */
  readAt: Date;
}

export interface CompletionRecord {
  /** The serialized result. */
  result: string;
  outcome: RecordOutcome;
  retentionMs: number;
}

export interface PurgeOptions {
  /** Rows deleted per statement, so a large purge never holds long locks. */
  batchSize: number;
  /** Stop after this many batches (the rest waits for the next purge). */
  maxBatches: number;
}

/**
 * What the work of `claimAndRun` hands back: its value, and the record the store writes.
 * Outcome `committed`: written with the work's writes, in its transaction. `rolled_back`: the
 * work's writes roll back, and the record alone is written, in the same transaction, so the
 * key is never free in between (a kept final error, SPEC S12).
 */
export interface WorkEnding<T> {
  value: T;
  completion: CompletionRecord;
}

/** What `claimAndRun` found or did. */
export type ClaimAndRunResult<T> =
  /** The key was ours: the work ran and its record committed. */
  | { status: 'done'; value: T }
  /** A committed, unexpired record stands: nothing ran (a replay, or 422 for another request). */
  | { status: 'exists'; record: StoredRecord }
  /**
   * A running transaction holds the key and has written nothing yet: nothing ran.
   * `sameRequest` is whether it runs the caller's fingerprint (409) or another (422);
   * `runningMs`, how long it has run on the store's clock, where the store knows (S10).
   */
  | { status: 'in_flight'; sameRequest: boolean; runningMs?: number };

export interface IdempotencyStore<Tx = unknown> {
  /**
   * The one way to hold a key (SPEC S7, S8, S11): opens one database transaction, claims
   * (scope, key) in it, runs `work` there and writes the record once, complete, with the
   * work's writes. The key is held for the transaction's life by a lock the database drops
   * when the transaction or its connection ends (a crash frees the key at once); the unique
   * constraint decides who commits.
   *
   * It never runs `work` unless the key is free (absent, or its record past its expiry). If
   * `work` throws, everything rolls back, nothing is written and the error propagates
   * unchanged. If the record cannot be written because one was committed for the key
   * meanwhile, everything rolls back and it throws `KeyTakenError`.
   */
  claimAndRun<T>(
    request: ClaimRequest,
    work: (tx: Tx) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>>;

  /** Deletes expired records in bounded batches and returns how many (SPEC S14). */
  purge(options: PurgeOptions): Promise<number>;
}

/**
 * What `sqliteStore` and `postgresStore` offer besides the seam: the guard uses none of it.
 * Their return type is `IdempotencyStore<Tx> & StoreExtras`.
 */
export interface StoreExtras {
  /** A short name for logs and errors: `sqlite`, `postgres`. */
  readonly dialect: string;

  /** Reads a record, or `undefined` when there is none (tests, tools, operators). */
  read(record: RecordKey): Promise<StoredRecord | undefined>;
}

/**
 * Thrown by a store's `claimAndRun` when the record could not be written because one was
 * committed for the key while the transaction ran (the unique constraint decided, S7, S8):
 * nothing of the transaction commits.
 */
export class KeyTakenError extends Error {
  override readonly name = 'KeyTakenError';
  constructor(message = 'A record for the idempotency key was committed by another request.') {
    super(message);
  }
}
