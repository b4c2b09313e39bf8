/**
 * One call of `guard.run` as each of its steps sees it (guard.ts decides, guard-work.ts runs
 * the work once the key is ours): the run's state, the request it claims with, and how it
 * reports (SPEC S25) and fails closed (S15, S26).
 */
import { performance } from 'node:perf_hooks';
import type { ClaimRequest, StoredRecord } from '../store/seam.js';
import type { GuardCall, GuardResult } from './call.js';
import { IdempotencyError } from './errors.js';
import type { GuardEvent, GuardEventHandler, GuardEventType } from './events.js';
import type { ResolvedGuardOptions } from './options.js';
import { redactStoreError } from './redact.js';
import { logSetupError, tellSetupFailure } from './setup-log.js';

/**
 * One call of `guard.run`, as each step of it sees it: the guard's options, the call, and
 * what is worked out once at its start.
 */
export interface Run<Tx, T> {
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

/** What one look at the key came to: the call's result, or what stands in its way. */
export type Found<T> =
  | { status: 'done'; result: GuardResult<T> }
  | { status: 'exists'; record: StoredRecord }
  | { status: 'in_flight'; sameRequest: boolean; runningMs?: number };

export function claimRequest<Tx, T>(run: Run<Tx, T>): ClaimRequest {
  const { call } = run;
  return {
    scope: call.scope,
    key: call.key,
    fingerprint: call.fingerprint,
    operation: call.operation,
  };
}

/** Reports a decision of `run` (SPEC S25). */
export function report<Tx, T>(
  run: Run<Tx, T>,
  type: GuardEventType,
  reason?: string,
  detail?: string,
): void {
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
    ...(detail === undefined ? {} : { detail }),
  });
}

export function emit(onEvent: GuardEventHandler, event: GuardEvent): void {
  try {
    onEvent(event);
  } catch {
    // An observer must never change the outcome of a mutation.
  }
}

/**
 * S15's 503, with the store's error redacted (S26): the driver's error can list the raw key
 * (and `secrets`: the serialized result) among its parameters, so only a `StoreFailure` with
 * its code, classes and scrubbed messages goes on `cause`, into the `failed` event, and, when
 * the store is not set up, to the operator (setup-log.ts).
 */
export function storeUnavailable<Tx, T>(
  run: Run<Tx, T>,
  reason: string,
  error: unknown,
  secrets: readonly string[],
): IdempotencyError {
  const { keyHash, guard } = run;
  const failure = redactStoreError(error, secrets);
  report(run, 'failed', reason, failure.setupReason ?? failure.message);
  const handler = guard.onSetupError ?? run.call.onSetupError ?? logSetupError;
  tellSetupFailure(guard, failure, handler);
  return new IdempotencyError(
    'IDEMPOTENCY_STORE_UNAVAILABLE',
    `The idempotency store failed, so the mutation for key ${keyHash} did not run or was rolled back; retry later.`,
    { keyHash, cause: failure },
  );
}
