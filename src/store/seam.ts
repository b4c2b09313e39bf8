/**
 * The seam between the guard and a database. The guard (src/core/guard.ts) decides what
 * happens; a store only persists, with a handful of primitive operations, each atomic on
 * its own. `Tx` is the transaction handle the guarded work receives: for the Drizzle
 * stores, a Drizzle database bound to the transaction.
 *
 * The seam is what the guard calls, and nothing more. What the shipped stores offer besides
 * (`read`, `dialect`: for tests, tools and logs) is `StoreExtras`. Store authors import
 * these types from `mutation-guard/store`.
 *
 * Rules every store meets (checked by the store conformance suite, test/conformance):
 * - records are unique on (scope, key) (SPEC S4);
 * - `claim` never lets two callers both hold a key (S7), and never takes over a live lease
 *   or a record of another fingerprint (S6, S11);
 * - `transaction` runs the work in one database transaction that also holds the claim for
 *   its whole life, so a takeover cannot happen while it runs (S8, S11);
 * - `complete` and `release` are fenced by the claim's token: they change nothing for a
 *   caller whose claim was taken over (S8);
 * - time (leases, retention) is measured on the database's clock where it has one (S11);
 * - `claimAndRun`, where a store has it (both shipped stores), holds the key for its
 *   transaction's life, runs the work only on a free key, lets the unique constraint decide
 *   who commits, and frees the key by rolling back (S7, S8, S11, S12). The guard rules of the
 *   conformance suite check it through the guard.
 */

/** Which record: unique on both parts together (SPEC S4). */
export interface RecordKey {
  scope: string;
  key: string;
}

/** A held claim: the record plus the random token that proves the claim is ours. */
export interface Fence extends RecordKey {
  token: string;
}

export interface ClaimRequest extends RecordKey {
  fingerprint: string;
  /** The operation's name, kept for operators reading the table. */
  operation: string;
  /** How long the claim is protected before a retry may take it over. */
  leaseMs: number;
  /**
   * How long to keep the record once complete. An in-flight record that is never completed
   * (its process died) becomes purgeable `leaseMs + retentionMs` after its claim.
   */
  retentionMs: number;
}

export type ClaimResult =
  /** We hold the key. `takenOver` when we replaced an in-flight claim whose lease had expired. */
  | { status: 'claimed'; token: string; takenOver: boolean }
  /**
   * Someone else's record stands: complete, in flight with a live lease (or locked by a
   * running transaction), or with another fingerprint. The guard decides what that means.
   */
  | { status: 'exists'; record: StoredRecord };

export type RecordState = 'in_flight' | 'complete';

/** What happened to the business transaction of a complete record. */
export type RecordOutcome = 'committed' | 'rolled_back';

export interface StoredRecord extends RecordKey {
  fingerprint: string;
  operation: string;
  state: RecordState;
  /** Set when complete. */
  outcome: RecordOutcome | null;
  /** The serialized result, set when complete. */
  result: string | null;
  /** When an in-flight claim may be taken over. */
  leaseExpiresAt: Date | null;
  /** When the record stops counting and may be purged. */
  expiresAt: Date;
  /** When the record was claimed (or taken over): how long an in-flight claim has run. */
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
 * What the work of `claimAndRun` hands back: its value, and the completion the store writes.
 * Outcome `committed`: written with the work's writes, in its transaction. `rolled_back`: the
 * work's writes roll back, and the completion alone is written, in the same transaction, so
 * the key is never free in between (a kept final error, SPEC S12).
 */
export interface WorkEnding<T> {
  value: T;
  completion: CompletionRecord;
}

/** What `claimAndRun` found or did. */
export type ClaimAndRunResult<T> =
  /** The key was ours: the work ran and its completion committed. */
  | { status: 'done'; value: T }
  /** A committed record stands (complete, or a lease-era claim in flight): nothing ran. */
  | { status: 'exists'; record: StoredRecord }
  /**
   * A running transaction holds the key and has written nothing yet: nothing ran.
   * `sameRequest` is whether it runs the caller's fingerprint (409) or another (422).
   */
  | { status: 'in_flight'; sameRequest: boolean };

export interface IdempotencyStore<Tx = unknown> {
  /**
   * Optional, the one-transaction claim (SPEC S11's second model): opens one database
   * transaction, claims (scope, key) in it, runs `work` there and writes the record once,
   * complete, with the work's writes. The key is held for the transaction's life by a lock the
   * database drops when the transaction or its connection ends; a unique constraint still
   * decides who commits (S7, S8). A guard uses it when the store has it, and then none of
   * `claim`, `transaction`, `complete` and `release` (they stay for stores without it, and for
   * records an earlier version left in flight).
   *
   * It never runs `work` unless the key is free (absent, past its expiry, or a lease-era claim
   * of the same fingerprint whose lease ran out: `takenOver`). If `work` throws, everything
   * rolls back, nothing is written and the error propagates unchanged. If the completion
   * cannot be written because a record was committed for the key meanwhile, everything rolls
   * back and it throws `LeaseLostError`.
   */
  claimAndRun?<T>(
    request: ClaimRequest,
    work: (tx: Tx, claim: { takenOver: boolean }) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>>;

  /**
   * Claims (scope, key) atomically (SPEC S7): inserts an in-flight record with a new token,
   * or takes over an in-flight record whose lease expired (same fingerprint only), or any
   * record past its `expiresAt` (it counts as absent, whatever its fingerprint: S14).
   * Otherwise returns the record that stands.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;

  /**
   * Runs `work` in one database transaction that first makes sure the claim is still
   * ours and holds it for the transaction's life (row lock or store-wide lock). If the
   * claim is no longer ours it throws `LeaseLostError` without running `work`. If `work`
   * throws, the transaction rolls back and the error propagates unchanged.
   */
  transaction<T>(fence: Fence, work: (tx: Tx) => Promise<T>): Promise<T>;

  /**
   * Marks the record complete with its result, only if `fence.token` still holds it
   * (SPEC S8). Inside `transaction`, pass its `tx` so that the result commits with the
   * business writes; without `tx` it is a write of its own (results stored after a
   * rollback, SPEC S12). Returns false when the fence did not match.
   *
   * A store whose `transaction` holds the claim for its whole life may send the completion
   * of that transaction's own fence with its COMMIT and answer true at once (the Postgres
   * store on a node-postgres Pool does); should it not match then, nothing commits and
   * `transaction` throws `LeaseLostError`, as the guard would on false.
   */
  complete(fence: Fence, completion: CompletionRecord, tx?: Tx): Promise<boolean>;

  /** Deletes an in-flight claim, only if `fence.token` still holds it. */
  release(fence: Fence): Promise<boolean>;

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
 * Thrown by a store's `transaction` when the claim is no longer ours (taken over after its
 * lease expired), and by the guard when a fenced completion matched nothing.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(message = 'The idempotency claim was taken over by another request.') {
    super(message);
  }
}
