import { performance } from 'node:perf_hooks';
import {
  type ClaimAndRunResult,
  type ClaimRequest,
  type ClaimResult,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type StoredRecord,
} from '../store/seam.js';
import { IdempotencyError } from './errors.js';
import type { GuardEvent, GuardEventHandler, GuardEventType } from './events.js';
import { hashKey } from './hash.js';
import {
  assertPositive,
  type GuardOptions,
  type ResolvedGuardOptions,
  resolveGuardOptions,
} from './options.js';
import { redactStoreError } from './redact.js';
import { isRollback, type Rollback } from './rollback.js';

/** One guarded call, as an adapter (or an app) hands it to `guard.run`. */
export interface GuardCall<Tx, T> {
  /** Whose key it is (SPEC S4). Use one constant for a single global scope. */
  scope: string;
  /** The validated key (see `resolveKey`). */
  key: string;
  /**
   * `fingerprint(request, guard.options)` of the request, key excluded (SPEC S5). Passing the
   * guard's options applies its `maxInputBytes` and `maxInputDepth`.
   */
  fingerprint: string;
  /**
   * The operation's name, for events and the record. Names longer than
   * `MAX_OPERATION_NAME` characters are stored and reported cut short (the fingerprint
   * covers the full name).
   */
  operation: string;
  /** Overrides the guard's retention for this call (SPEC S14). */
  retention?: number;
  /**
   * The mutation. It receives the transaction handle; what it writes through it commits
   * together with the stored result or not at all (SPEC S8). Throwing, or returning
   * `rollback(value)`, rolls back and frees the key (S12). `run.keyHash` is the key's
   * short hash (S26), already computed, for anything the work logs or exposes.
   */
  work: (tx: Tx, run: { keyHash: string }) => Promise<T | Rollback<T>>;
}

export interface GuardResult<T> {
  /** The mutation's result: fresh, or the stored one. */
  value: T;
  /** True when `value` is a stored result and the work did not run (SPEC S9). */
  replayed: boolean;
}

export interface PurgeRequest {
  /** @default 1000 */
  batchSize?: number;
  /** @default Infinity */
  maxBatches?: number;
}

export interface Guard<Tx> {
  run<T>(call: GuardCall<Tx, T>): Promise<GuardResult<T>>;
  /** Deletes expired records in bounded batches; resolves to how many (SPEC S14). */
  purge(request?: PurgeRequest): Promise<number>;
  readonly options: ResolvedGuardOptions<Tx>;
}

/**
 * S10's bounded wait polls the store: the first pause is this long, and each next one twice
 * the last...
 */
const FIRST_POLL_MS = 25;
/** ...up to 2**4 times the first (400 ms), so a long wait still looks a few times a second. */
const MAX_POLL_DOUBLINGS = 4;
/** The `Retry-After` of the 409 for a claim lost to a takeover: its result is stored soon. */
const TAKEN_OVER_RETRY_AFTER_SECONDS = 1;
/**
 * The `Retry-After` of the 409 for a key a running transaction holds (`claimAndRun`): it has
 * written no row, so how long it has run is unknown; a second is the floor S10's rule gives.
 */
const HELD_RETRY_AFTER_SECONDS = 1;
/** Records `purge()` deletes per batch unless told otherwise: each batch one short statement. */
const PURGE_BATCH_SIZE = 1000;

/**
 * The guard on a store: its options are checked once, here; each `run` follows the state
 * machine of `runGuarded` below, one `Run` object carrying the call through its steps.
 */
export function createGuard<Tx>(options: GuardOptions<Tx>): Guard<Tx> {
  const resolved = resolveGuardOptions(options);
  return {
    run<T>(call: GuardCall<Tx, T>) {
      return runGuarded(resolved, call);
    },
    purge(request?: PurgeRequest) {
      return purgeExpired(resolved, request);
    },
    options: resolved,
  };
}

/**
 * One call of `guard.run`, as each step of it sees it: the guard's options, the call, and
 * what is worked out once at its start.
 */
interface Run<Tx, T> {
  readonly guard: ResolvedGuardOptions<Tx>;
  /** The call, its operation name cut to `MAX_OPERATION_NAME`. */
  readonly call: GuardCall<Tx, T>;
  readonly keyHash: string;
  /** The call's retention, else the guard's (S14). */
  readonly retention: number;
  /** `performance.now()` at the start, for the events' `durationMs`. */
  readonly started: number;
  /** `Date.now()` from which a duplicate in flight answers 409 instead of waiting (S10). */
  readonly deadline: number;
}

/** The run once it holds the key: the steps after the claim go through its fence. */
interface ClaimedRun<Tx, T> extends Run<Tx, T> {
  readonly fence: Fence;
  /** The serialized result once made: a store error that lists it is scrubbed of it (S26). */
  storedResult: string | undefined;
  /**
   * Frees the key after a failure, quietly: the lease model's fenced release. Under
   * `claimAndRun` a rollback freed it already, and this does nothing.
   */
  readonly release: () => Promise<void>;
}

/**
 * The state machine of SPEC S6-S16, in one place. A record is absent, in flight or complete:
 *
 * - absent (or expired)  -> claim it, run the work in one transaction that stores the result
 * - in flight, ours      -> (that is the run above)
 * - in flight, theirs    -> 409, or wait for it and replay (S10)
 * - in flight, expired   -> the store's claim takes it over with a new token (S11)
 * - complete             -> replay the stored result (S9)
 * - other fingerprint    -> 422 on every path (S6)
 */
async function runGuarded<Tx, T>(
  guard: ResolvedGuardOptions<Tx>,
  guarded: GuardCall<Tx, T>,
): Promise<GuardResult<T>> {
  const run = startRun(guard, guarded);
  for (let attempt = 0; ; attempt++) {
    const found = guard.store.claimAndRun ? await claimAndRun(run) : await claimThenRun(run);
    if (found.status === 'done') return found.result;
    if (found.status === 'in_flight') {
      if (!found.sameRequest) throw keyReused(run);
      if (Date.now() >= run.deadline) throw keyInUse(run, HELD_RETRY_AFTER_SECONDS);
    } else {
      const { record } = found;
      if (record.fingerprint !== run.call.fingerprint) throw keyReused(run);
      if (isReplayable(record)) return replay(run, record);
      if (Date.now() >= run.deadline) throw keyInUse(run, retryAfterSeconds(record));
    }
    // S10: wait without holding a connection, then look again (the loop claims again, so an
    // expired lease is taken over and a freed key is claimed afresh).
    await sleep(pollPause(attempt, run.deadline));
  }
}

/** What one look at the key came to: the call's result, or what stands in its way. */
type Found<T> =
  | { status: 'done'; result: GuardResult<T> }
  | { status: 'exists'; record: StoredRecord }
  | { status: 'in_flight'; sameRequest: boolean };

/** The lease model: claim the key, then run the work in a transaction of its own (S7, S8). */
async function claimThenRun<Tx, T>(run: Run<Tx, T>): Promise<Found<T>> {
  const claim = await claimKey(run);
  if (claim.status === 'exists') return claim;
  return { status: 'done', result: await execute(run, claim) };
}

function startRun<Tx, T>(guard: ResolvedGuardOptions<Tx>, guarded: GuardCall<Tx, T>): Run<Tx, T> {
  const started = performance.now();
  const call = { ...guarded, operation: boundedOperationName(guarded.operation) };
  const retention = call.retention ?? guard.retention;
  assertPositive('retention', retention);
  return {
    guard,
    call,
    keyHash: hashKey(call.key),
    retention,
    started,
    deadline: Date.now() + guard.wait,
  };
}

function claimRequest<Tx, T>(run: Run<Tx, T>): ClaimRequest {
  const { call } = run;
  return {
    scope: call.scope,
    key: call.key,
    fingerprint: call.fingerprint,
    operation: call.operation,
    leaseMs: run.guard.lease,
    retentionMs: run.retention,
  };
}

async function claimKey<Tx, T>(run: Run<Tx, T>): Promise<ClaimResult> {
  const { guard, call } = run;
  try {
    return await guard.store.claim(claimRequest(run));
  } catch (error) {
    report(run, 'failed', 'store failed during claim');
    throw storeUnavailable(run.keyHash, error, [call.key]);
  }
}

/** S6: the key stands for another request. */
function keyReused<Tx, T>(run: Run<Tx, T>): IdempotencyError {
  report(run, 'reused');
  return new IdempotencyError(
    'IDEMPOTENCY_KEY_REUSED',
    `Idempotency key ${run.keyHash} was already used for a different request; use a new key for a new request.`,
    { keyHash: run.keyHash },
  );
}

/**
 * S14: a complete record past its retention is never replayed. The store handed it back
 * because another request is taking it over right now: it is in flight.
 */
function isReplayable(record: StoredRecord): boolean {
  return record.state === 'complete' && record.expiresAt > record.readAt;
}

/** S9: the stored result, and the work does not run. */
function replay<Tx, T>(run: Run<Tx, T>, record: StoredRecord): GuardResult<T> {
  const value = run.guard.serializer.parse(record.result ?? 'null') as T;
  report(run, 'replayed');
  return { value, replayed: true };
}

/** S10: another request holds the key, and the wait (if any) is over. */
function keyInUse<Tx, T>(run: Run<Tx, T>, retryAfter: number): IdempotencyError {
  report(run, 'in-use');
  return new IdempotencyError(
    'IDEMPOTENCY_KEY_IN_USE',
    `A request with idempotency key ${run.keyHash} is still in progress; retry later.`,
    { keyHash: run.keyHash, retryAfterSeconds: retryAfter },
  );
}

/** S10: the pause before looking again: doubling, capped, and never past the deadline. */
function pollPause(attempt: number, deadline: number): number {
  const backoff = FIRST_POLL_MS * 2 ** Math.min(attempt, MAX_POLL_DOUBLINGS);
  return Math.min(backoff, Math.max(1, deadline - Date.now()));
}

/** The key is ours: run the work and store its result in one transaction (S8). */
async function execute<Tx, T>(
  run: Run<Tx, T>,
  claim: Extract<ClaimResult, { status: 'claimed' }>,
): Promise<GuardResult<T>> {
  report(run, claim.takenOver ? 'taken-over' : 'claimed');
  const { scope, key } = run.call;
  const fence = { scope, key, token: claim.token };
  const claimed: ClaimedRun<Tx, T> = {
    ...run,
    fence,
    storedResult: undefined,
    release: () => releaseQuietly(run, fence),
  };
  let outcome: { value: T };
  try {
    outcome = await run.guard.store.transaction(claimed.fence, (tx) => workAndStore(claimed, tx));
  } catch (error) {
    return settleFailure(claimed, error);
  }
  report(claimed, 'completed');
  return { value: outcome.value, replayed: false };
}

/**
 * Inside the store's transaction: the work, then its result stored with its writes. A
 * failure leaves as one of the errors `settleFailure` tells apart.
 */
async function workAndStore<Tx, T>(run: ClaimedRun<Tx, T>, tx: Tx): Promise<{ value: T }> {
  const value = await runWork(run, tx);
  // Throwing rolls the business writes back; the rollback is handled after.
  if (isRollback<T>(value)) throw new RolledBack(value);
  const result = serializeResult(run, value);
  run.storedResult = result;
  const completed = await run.guard.store.complete(
    run.fence,
    { result, outcome: 'committed', retentionMs: run.retention },
    tx,
  );
  if (!completed) throw new LeaseLostError();
  return { value };
}

/** The work itself; what it throws leaves as `WorkFailed`. */
async function runWork<Tx, T>(run: ClaimedRun<Tx, T>, tx: Tx): Promise<T | Rollback<T>> {
  try {
    return await run.call.work(tx, { keyHash: run.keyHash });
  } catch (error) {
    throw new WorkFailed(error);
  }
}

/**
 * The one-transaction model (`store.claimAndRun`, S11's second liveness model): the claim,
 * the work and its record in one database transaction. A rollback frees the key by itself, so
 * a failure has nothing to release; a kept final error is written in that same transaction,
 * after the work's writes are rolled back (S12).
 */
async function claimAndRun<Tx, T>(run: Run<Tx, T>): Promise<Found<T>> {
  const { guard, call } = run;
  const claimed: ClaimedRun<Tx, T> = {
    ...run,
    fence: { scope: call.scope, key: call.key, token: '' },
    storedResult: undefined,
    release: async () => {},
  };
  let started = false;
  let kept: { value: T } | undefined;
  const store = guard.store as Required<Pick<IdempotencyStore<Tx>, 'claimAndRun'>>;
  let found: ClaimAndRunResult<T>;
  try {
    found = await store.claimAndRun(claimRequest(run), async (tx, claim) => {
      started = true;
      report(run, claim.takenOver ? 'taken-over' : 'claimed');
      const value = await runWork(claimed, tx);
      if (isRollback<T>(value) && !value.keep) throw new RolledBack(value);
      const answer = isRollback<T>(value) ? value.value : (value as T);
      const result = serializeResult(claimed, answer);
      claimed.storedResult = result;
      if (isRollback<T>(value)) kept = { value: answer };
      const outcome = kept ? 'rolled_back' : 'committed';
      return { value: answer, completion: { result, outcome, retentionMs: run.retention } };
    });
  } catch (error) {
    if (!started) {
      report(run, 'failed', 'store failed during claim');
      throw storeUnavailable(run.keyHash, error, [call.key]);
    }
    if (kept && error instanceof LeaseLostError) {
      // As in the lease model: the answer stands; it was not kept, so a retry runs afresh.
      report(run, 'failed', 'claim lost');
      return { status: 'done', result: { value: kept.value, replayed: false } };
    }
    return { status: 'done', result: await settleFailure(claimed, error) };
  }
  if (found.status !== 'done') return found;
  if (kept) report(run, 'completed', 'kept final error');
  else report(run, 'completed');
  return { status: 'done', result: { value: found.value, replayed: false } };
}

/**
 * Serializes a result for storage, enforcing the size cap (S16). A serializer that throws
 * (a function or a cycle in the result) is the work's fault, not the store's.
 */
function serializeResult<Tx, T>(run: Run<Tx, T>, value: unknown): string {
  let text: string;
  try {
    text = run.guard.serializer.stringify(value);
  } catch (error) {
    throw new WorkFailed(error);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  const { maxResultBytes } = run.guard;
  if (bytes > maxResultBytes) {
    throw new IdempotencyError(
      'IDEMPOTENCY_RESULT_TOO_LARGE',
      `The result for idempotency key ${run.keyHash} is ${bytes} bytes, over the ${maxResultBytes}-byte limit; the mutation was rolled back.`,
      { keyHash: run.keyHash },
    );
  }
  return text;
}

/** The transaction rolled back: what that means for the key and for the caller. */
async function settleFailure<Tx, T>(
  run: ClaimedRun<Tx, T>,
  error: unknown,
): Promise<GuardResult<T>> {
  if (error instanceof RolledBack) return settleRollback(run, error.rollback as Rollback<T>);
  if (error instanceof WorkFailed) {
    await run.release();
    report(run, 'released', 'work threw');
    throw error.cause;
  }
  if (error instanceof LeaseLostError) {
    report(run, 'failed', 'claim lost to a takeover');
    throw new IdempotencyError(
      'IDEMPOTENCY_KEY_IN_USE',
      `Idempotency key ${run.keyHash} was claimed by another request while this attempt ran (a retry after its lease expired); this attempt was rolled back. Retry to get the stored result.`,
      { keyHash: run.keyHash, retryAfterSeconds: TAKEN_OVER_RETRY_AFTER_SECONDS, cause: error },
    );
  }
  if (IdempotencyError.is(error)) {
    // Result too large: rolled back; free the key, nothing was stored (S16).
    await run.release();
    report(run, 'failed', error.code);
    throw error;
  }
  // Begin, lock, complete or commit failed: the store is the problem (S15). Free the key
  // if we still can; if not, the lease runs out and a retry takes over.
  await run.release();
  report(run, 'failed', 'store failed during the transaction');
  const { fence, storedResult } = run;
  throw storeUnavailable(run.keyHash, error, [
    fence.key,
    ...(storedResult === undefined ? [] : [storedResult]),
  ]);
}

/** S12: the work asked for `rollback(value)`: free the key, or keep the answer for retries. */
async function settleRollback<Tx, T>(
  run: ClaimedRun<Tx, T>,
  { value, keep }: Rollback<T>,
): Promise<GuardResult<T>> {
  if (!keep) {
    // The answer stands even if freeing the key fails: the lease then runs out instead.
    await run.release();
    report(run, 'released', 'rolled back');
    return { value, replayed: false };
  }
  let result: string;
  try {
    result = serializeResult(run, value);
  } catch (failure) {
    return settleFailure(run, failure);
  }
  const stored = await storeKeptAnswer(run, result);
  report(run, stored ? 'completed' : 'failed', stored ? 'kept final error' : 'claim lost');
  return { value, replayed: false };
}

/** Stores a kept answer outside the rolled-back transaction; false when the claim was lost. */
async function storeKeptAnswer<Tx, T>(run: ClaimedRun<Tx, T>, result: string): Promise<boolean> {
  try {
    return await run.guard.store.complete(run.fence, {
      result,
      outcome: 'rolled_back',
      retentionMs: run.retention,
    });
  } catch (error) {
    report(run, 'failed', 'store failed storing a kept error');
    throw storeUnavailable(run.keyHash, error, [run.fence.key, result]);
  }
}

async function releaseQuietly<Tx, T>(run: Run<Tx, T>, fence: Fence): Promise<void> {
  try {
    await run.guard.store.release(fence);
  } catch {
    // The lease will expire and a retry will take over; nothing was committed.
  }
}

async function purgeExpired<Tx>(
  guard: ResolvedGuardOptions<Tx>,
  request: PurgeRequest = {},
): Promise<number> {
  const started = performance.now();
  const count = await guard.store.purge({
    batchSize: request.batchSize ?? PURGE_BATCH_SIZE,
    maxBatches: request.maxBatches ?? Number.POSITIVE_INFINITY,
  });
  if (guard.onEvent) {
    emit(guard.onEvent, {
      type: 'purged',
      operation: '',
      durationMs: performance.now() - started,
      count,
    });
  }
  return count;
}

/** Reports a decision of `run` (SPEC S25). */
function report<Tx, T>(run: Run<Tx, T>, type: GuardEventType, reason?: string): void {
  const { onEvent } = run.guard;
  // Most guards have no observer: build no event for nobody.
  if (!onEvent) return;
  emit(onEvent, {
    type,
    operation: run.call.operation,
    scope: run.call.scope,
    keyHash: run.keyHash,
    durationMs: performance.now() - run.started,
    ...(reason === undefined ? {} : { reason }),
  });
}

function emit(onEvent: GuardEventHandler, event: GuardEvent): void {
  try {
    onEvent(event);
  } catch {
    // An observer must never change the outcome of a mutation.
  }
}

/**
 * The `Retry-After` (seconds) of a 409 for an in-flight record (SPEC S10): as long as the
 * original has run so far, at least 1 second and at most what is left of its lease.
 *
 * A mutation that has run for `t` is likely to need about `t` more (the median of a
 * duration already survived), so coming back after `t` finds most short mutations done
 * without hammering the store, and long ones are polled less often as they go. It is never
 * more than the lease that is left: by then the original has finished or its claim may be
 * taken over, so waiting longer only delays the client. Both durations are measured on the
 * store's clock (`readAt`), so clock skew between processes plays no part.
 */
export function retryAfterSeconds(
  record: Pick<StoredRecord, 'createdAt' | 'readAt' | 'leaseExpiresAt'>,
): number {
  const elapsedMs = record.readAt.getTime() - record.createdAt.getTime();
  const leaseLeftMs = record.leaseExpiresAt
    ? record.leaseExpiresAt.getTime() - record.readAt.getTime()
    : 0;
  const ceiling = Math.max(1, Math.ceil(leaseLeftMs / 1000));
  return Math.min(Math.max(Math.ceil(elapsedMs / 1000), 1), ceiling);
}

/** The longest operation name stored in a record and carried in events. */
export const MAX_OPERATION_NAME = 200;

/**
 * A name cut to `MAX_OPERATION_NAME` characters with a marker saying how long it was: a
 * client chooses GraphQL operation names, and a 2 MB one must not be kept for the whole
 * retention and copied into every event. The fingerprint still covers the full name (S5).
 */
function boundedOperationName(name: string): string {
  if (name.length <= MAX_OPERATION_NAME) return name;
  return `${name.slice(0, MAX_OPERATION_NAME)}...(${name.length} chars)`;
}

/**
 * S15's 503, with the store's error redacted (S26): the driver's error can list the raw key
 * and the serialized result among its parameters, so only a `StoreFailure` with its code,
 * classes and scrubbed messages goes on `cause`.
 */
function storeUnavailable(
  keyHash: string,
  error: unknown,
  secrets: readonly string[],
): IdempotencyError {
  return new IdempotencyError(
    'IDEMPOTENCY_STORE_UNAVAILABLE',
    `The idempotency store failed, so the mutation for key ${keyHash} did not run or was rolled back; retry later.`,
    { keyHash, cause: redactStoreError(error, secrets) },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Carries an error thrown by the work through the store's transaction. */
class WorkFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('guarded work failed');
  }
}

/** Carries a `rollback(...)` result through the store's transaction, rolling it back. */
class RolledBack extends Error {
  constructor(readonly rollback: Rollback<unknown>) {
    super('guarded work asked for a rollback');
  }
}
