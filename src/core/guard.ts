import { performance } from 'node:perf_hooks';
import type { StoredRecord } from '../store/seam.js';
import type { GuardCall, GuardResult } from './call.js';
import { IdempotencyError } from './errors.js';
import { claimAndRun } from './guard-work.js';
import { hashKey } from './hash.js';
import {
  assertPositive,
  type GuardOptions,
  type ResolvedGuardOptions,
  resolveGuardOptions,
} from './options.js';
import { emit, type Run, report } from './run.js';

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
 * The state machine of SPEC S6-S16, in one place. A key is absent, in flight or complete:
 *
 * - absent (or expired)  -> the store's one transaction claims it, runs the work and writes
 *                           the record, complete, with the work's writes (S7, S8)
 * - in flight            -> a running transaction holds it (no row yet): 409, or wait for
 *                           it and replay (S10); another request's: 422 (S6)
 * - complete             -> replay the stored result (S9)
 * - other fingerprint    -> 422 on every path (S6)
 */
async function runGuarded<Tx, T>(
  guard: ResolvedGuardOptions<Tx>,
  guarded: GuardCall<Tx, T>,
): Promise<GuardResult<T>> {
  const run = startRun(guard, guarded);
  for (let attempt = 0; ; attempt++) {
    const found = await claimAndRun(run);
    if (found.status === 'done') return found.result;
    let retryAfter: number;
    if (found.status === 'in_flight') {
      if (!found.sameRequest) throw keyReused(run);
      retryAfter = retryAfterSeconds(found.runningMs);
    } else {
      const { record } = found;
      if (record.fingerprint !== run.call.fingerprint) throw keyReused(run);
      if (isReplayable(record)) return replay(run, record);
      retryAfter = retryAfterSeconds(undefined);
    }
    if (Date.now() >= run.deadline) throw keyInUse(run, retryAfter);
    // S10: wait without holding a connection, then look again (the loop claims again, so a
    // freed key is claimed afresh).
    await sleep(pollPause(attempt, run.deadline));
  }
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
 * S14: a record past its retention is never replayed, whatever a store hands back: it counts
 * as in flight (another request is replacing it).
 */
function isReplayable(record: StoredRecord): boolean {
  return record.expiresAt > record.readAt;
}

/** S9: the stored result, and the work does not run. */
function replay<Tx, T>(run: Run<Tx, T>, record: StoredRecord): GuardResult<T> {
  const value = run.guard.serializer.parse(record.result) as T;
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
 * The `Retry-After` (seconds) of a 409 for a key in flight (SPEC S10): as long as the
 * original has run so far (`runningMs`, on the store's clock), at least 1 second; 1 when the
 * store cannot tell (a key a running Postgres transaction holds has no row to date it).
 *
 * A mutation that has run for `t` is likely to need about `t` more (the median of a
 * duration already survived), so coming back after `t` finds most short mutations done
 * without hammering the store, and long ones are polled less often as they go.
 */
export function retryAfterSeconds(runningMs: number | undefined): number {
  if (runningMs === undefined) return 1;
  return Math.max(1, Math.ceil(runningMs / 1000));
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
