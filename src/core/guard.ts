import { performance } from 'node:perf_hooks';
import {
  type ClaimResult,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type StoredRecord,
} from '../store.js';
import { IdempotencyError } from './errors.js';
import type { GuardEvent, GuardEventType } from './events.js';
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
 * The state machine of SPEC S6-S16, in one place. A record is absent, in flight or complete:
 *
 * - absent (or expired)  -> claim it, run the work in one transaction that stores the result
 * - in flight, ours      -> (that is the run above)
 * - in flight, theirs    -> 409, or wait for it and replay (S10)
 * - in flight, expired   -> the store's claim takes it over with a new token (S11)
 * - complete             -> replay the stored result (S9)
 * - other fingerprint    -> 422 on every path (S6)
 */
export function createGuard<Tx>(options: GuardOptions<Tx>): Guard<Tx> {
  const resolved = resolveGuardOptions(options);
  const { store, serializer } = resolved;

  function emit(type: GuardEventType, fields: Omit<GuardEvent, 'type'>): void {
    if (!resolved.onEvent) return;
    try {
      resolved.onEvent({ type, ...fields });
    } catch {
      // An observer must never change the outcome of a mutation.
    }
  }

  async function run<T>(guarded: GuardCall<Tx, T>): Promise<GuardResult<T>> {
    const started = performance.now();
    const call = { ...guarded, operation: boundedOperationName(guarded.operation) };
    const keyHash = hashKey(call.key);
    const retention = call.retention ?? resolved.retention;
    assertPositive('retention', retention);
    const report = (type: GuardEventType, reason?: string) => {
      // Most guards have no observer: build no event for nobody.
      if (!resolved.onEvent) return;
      emit(type, {
        operation: call.operation,
        scope: call.scope,
        keyHash,
        durationMs: performance.now() - started,
        ...(reason === undefined ? {} : { reason }),
      });
    };
    const deadline = Date.now() + resolved.wait;

    for (let attempt = 0; ; attempt++) {
      const claim = await claimOrFail(store, call, retention, resolved.lease, keyHash, report);
      if (claim.status === 'claimed') {
        report(claim.takenOver ? 'taken-over' : 'claimed');
        const fence: Fence = { scope: call.scope, key: call.key, token: claim.token };
        return execute(call, fence, retention, keyHash, report);
      }
      const { record } = claim;
      if (record.fingerprint !== call.fingerprint) {
        report('reused');
        throw new IdempotencyError(
          'IDEMPOTENCY_KEY_REUSED',
          `Idempotency key ${keyHash} was already used for a different request; use a new key for a new request.`,
          { keyHash },
        );
      }
      // S14: a complete record past its retention is never replayed. The store handed it
      // back because another request is taking it over right now: it is in flight.
      if (record.state === 'complete' && record.expiresAt > record.readAt) {
        const value = serializer.parse(record.result ?? 'null') as T;
        report('replayed');
        return { value, replayed: true };
      }
      if (Date.now() >= deadline) {
        report('in-use');
        throw inUse(keyHash, retryAfterSeconds(record));
      }
      // S10: wait without holding a connection, then look again (the loop re-claims, so an
      // expired lease is taken over and a released key is claimed afresh).
      const pause = Math.min(25 * 2 ** Math.min(attempt, 4), Math.max(1, deadline - Date.now()));
      await sleep(pause);
    }
  }

  async function execute<T>(
    call: GuardCall<Tx, T>,
    fence: Fence,
    retention: number,
    keyHash: string,
    report: (type: GuardEventType, reason?: string) => void,
  ): Promise<GuardResult<T>> {
    let outcome: { value: T } | Rollback<T>;
    // Kept to scrub it from a store error (S26): a failed completion lists it as a parameter.
    let storedResult: string | undefined;
    try {
      outcome = await store.transaction(fence, async (tx) => {
        let value: T | Rollback<T>;
        try {
          value = await call.work(tx, { keyHash });
        } catch (error) {
          throw new WorkFailed(error);
        }
        // Throwing rolls the business writes back; the rollback is handled below.
        if (isRollback<T>(value)) throw new RolledBack(value);
        const result = serializeResult(value, keyHash);
        storedResult = result;
        const completed = await store.complete(
          fence,
          { result, outcome: 'committed', retentionMs: retention },
          tx,
        );
        if (!completed) throw new LeaseLostError();
        return { value };
      });
    } catch (error) {
      return settleFailure(error, fence, retention, keyHash, report, storedResult);
    }
    report('completed');
    return { value: outcome.value, replayed: false };
  }

  async function settleFailure<T>(
    error: unknown,
    fence: Fence,
    retention: number,
    keyHash: string,
    report: (type: GuardEventType, reason?: string) => void,
    result?: string,
  ): Promise<GuardResult<T>> {
    if (error instanceof RolledBack) {
      const { value, keep } = error.rollback as Rollback<T>;
      if (keep) {
        let result: string;
        try {
          result = serializeResult(value, keyHash);
        } catch (failure) {
          return settleFailure(failure, fence, retention, keyHash, report);
        }
        const stored = await completeOrFail(fence, result, retention, keyHash, report);
        report(stored ? 'completed' : 'failed', stored ? 'kept final error' : 'claim lost');
      } else {
        // The answer stands even if freeing the key fails: the lease then runs out instead.
        await releaseQuietly(fence);
        report('released', 'rolled back');
      }
      return { value, replayed: false };
    }
    if (error instanceof WorkFailed) {
      await releaseQuietly(fence);
      report('released', 'work threw');
      throw error.cause;
    }
    if (error instanceof LeaseLostError) {
      report('failed', 'claim lost to a takeover');
      throw new IdempotencyError(
        'IDEMPOTENCY_KEY_IN_USE',
        `Idempotency key ${keyHash} was taken over by a retry after its lease expired; this attempt was rolled back. Retry to get the stored result.`,
        { keyHash, retryAfterSeconds: 1, cause: error },
      );
    }
    if (IdempotencyError.is(error)) {
      // Result too large: rolled back; free the key, nothing was stored (S16).
      await releaseQuietly(fence);
      report('failed', error.code);
      throw error;
    }
    // Begin, lock, complete or commit failed: the store is the problem (S15). Free the key
    // if we still can; if not, the lease runs out and a retry takes over.
    await releaseQuietly(fence);
    report('failed', 'store failed during the transaction');
    throw storeUnavailable(keyHash, error, [fence.key, ...(result === undefined ? [] : [result])]);
  }

  /**
   * Serializes a result for storage, enforcing the size cap (S16). A serializer that throws
   * (a function or a cycle in the result) is the work's fault, not the store's.
   */
  function serializeResult(value: unknown, keyHash: string): string {
    let text: string;
    try {
      text = serializer.stringify(value);
    } catch (error) {
      throw new WorkFailed(error);
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > resolved.maxResultBytes) {
      throw new IdempotencyError(
        'IDEMPOTENCY_RESULT_TOO_LARGE',
        `The result for idempotency key ${keyHash} is ${bytes} bytes, over the ${resolved.maxResultBytes}-byte limit; the mutation was rolled back.`,
        { keyHash },
      );
    }
    return text;
  }

  async function completeOrFail(
    fence: Fence,
    result: string,
    retention: number,
    keyHash: string,
    report: (type: GuardEventType, reason?: string) => void,
  ): Promise<boolean> {
    try {
      return await store.complete(fence, {
        result,
        outcome: 'rolled_back',
        retentionMs: retention,
      });
    } catch (error) {
      report('failed', 'store failed storing a kept error');
      throw storeUnavailable(keyHash, error, [fence.key, result]);
    }
  }

  async function releaseQuietly(fence: Fence): Promise<void> {
    try {
      await store.release(fence);
    } catch {
      // The lease will expire and a retry will take over; nothing was committed.
    }
  }

  async function purge(request: PurgeRequest = {}): Promise<number> {
    const started = performance.now();
    const count = await store.purge({
      batchSize: request.batchSize ?? 1000,
      maxBatches: request.maxBatches ?? Number.POSITIVE_INFINITY,
    });
    emit('purged', { operation: '', durationMs: performance.now() - started, count });
    return count;
  }

  return { run, purge, options: resolved };
}

async function claimOrFail<Tx, T>(
  store: IdempotencyStore<Tx>,
  call: GuardCall<Tx, T>,
  retention: number,
  lease: number,
  keyHash: string,
  report: (type: GuardEventType, reason?: string) => void,
): Promise<ClaimResult> {
  try {
    return await store.claim({
      scope: call.scope,
      key: call.key,
      fingerprint: call.fingerprint,
      operation: call.operation,
      leaseMs: lease,
      retentionMs: retention,
    });
  } catch (error) {
    report('failed', 'store failed during claim');
    throw storeUnavailable(keyHash, error, [call.key]);
  }
}

function inUse(keyHash: string, retryAfter: number): IdempotencyError {
  return new IdempotencyError(
    'IDEMPOTENCY_KEY_IN_USE',
    `A request with idempotency key ${keyHash} is still in progress; retry later.`,
    { keyHash, retryAfterSeconds: retryAfter },
  );
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
