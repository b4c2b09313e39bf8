import { performance } from 'node:perf_hooks';
import type { ClaimResult, StoredRecord } from '../store/seam.js';
import { IdempotencyError } from './errors.js';
import { claimAndRun, runUnderLease } from './guard-work.js';
import { hashKey } from './hash.js';
import {
  assertPositive,
  type GuardOptions,
  type ResolvedGuardOptions,
  resolveGuardOptions,
} from './options.js';
import type { Rollback } from './rollback.js';
import { claimRequest, emit, type Found, type Run, report, storeUnavailable } from './run.js';
import type { SetupErrorHandler } from './setup-log.js';

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
  /**
   * Where a store that is not set up is reported when the guard's options name no
   * `onSetupError`: an adapter passes its server's logger here (the GraphQL plugin, Yoga's).
   * @default console.error
   */
  onSetupError?: SetupErrorHandler;
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

/** The lease model: claim the key, then run the work in a transaction of its own (S7, S8). */
async function claimThenRun<Tx, T>(run: Run<Tx, T>): Promise<Found<T>> {
  const claim = await claimKey(run);
  if (claim.status === 'exists') return claim;
  return { status: 'done', result: await runUnderLease(run, claim) };
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

async function claimKey<Tx, T>(run: Run<Tx, T>): Promise<ClaimResult> {
  const { guard, call } = run;
  try {
    return await guard.store.claim(claimRequest(run));
  } catch (error) {
    throw storeUnavailable(run, 'store failed during claim', error, [call.key]);
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
