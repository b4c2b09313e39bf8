/**
 * Once the key is free (SPEC S8, S12, S16): the store's one transaction claims it, runs the
 * work and writes its record, and what a failure means for the key and the caller. guard.ts
 * decides when to get here.
 *
 * A rollback frees the key by itself, so a failure has nothing to release; a kept final error
 * is written in that same transaction, after the work's writes are rolled back (S12).
 */
import { type ClaimAndRunResult, KeyTakenError } from '../store/seam.js';
import type { GuardResult } from './call.js';
import { IdempotencyError } from './errors.js';
import { isRollback, type Rollback } from './rollback.js';
import { claimRequest, type Found, type Run, report, storeUnavailable } from './run.js';

/** The `Retry-After` of the 409 for a record another request committed first: it is stored. */
const KEY_TAKEN_RETRY_AFTER_SECONDS = 1;

/** The claim, the work and its record in one database transaction (`store.claimAndRun`). */
export async function claimAndRun<Tx, T>(run: Run<Tx, T>): Promise<Found<T>> {
  const { guard, call } = run;
  /** What happens inside the store's transaction, for the failure that may follow. */
  const inside: Inside<T> = { started: false, storedResult: undefined, kept: undefined };
  let found: ClaimAndRunResult<T>;
  try {
    found = await guard.store.claimAndRun(claimRequest(run), async (tx) => {
      inside.started = true;
      report(run, 'claimed');
      const value = await runWork(run, tx);
      // Throwing rolls the business writes back; the rollback is handled after.
      if (isRollback<T>(value) && !value.keep) throw new RolledBack(value);
      const answer = isRollback<T>(value) ? value.value : (value as T);
      const result = serializeResult(run, answer);
      inside.storedResult = result;
      if (isRollback<T>(value)) inside.kept = { value: answer };
      const outcome = inside.kept ? 'rolled_back' : 'committed';
      return { value: answer, completion: { result, outcome, retentionMs: run.retention } };
    });
  } catch (error) {
    if (!inside.started) {
      throw storeUnavailable(run, 'store failed during claim', error, [call.key]);
    }
    if (inside.kept && error instanceof KeyTakenError) {
      // The answer stands (its writes were rolled back anyway); it was not stored, and a
      // retry gets the record that was.
      report(run, 'failed', 'key taken');
      return { status: 'done', result: { value: inside.kept.value, replayed: false } };
    }
    return { status: 'done', result: settleFailure(run, error, inside.storedResult) };
  }
  if (found.status !== 'done') return found;
  if (inside.kept) report(run, 'completed', 'kept final error');
  else report(run, 'completed');
  return { status: 'done', result: { value: found.value, replayed: false } };
}

interface Inside<T> {
  /** The store ran the work: the key was ours. */
  started: boolean;
  /** The serialized result once made: a store error that lists it is scrubbed of it (S26). */
  storedResult: string | undefined;
  /** A kept final error's answer (S12), once the work returned one. */
  kept: { value: T } | undefined;
}

/** The work itself; what it throws leaves as `WorkFailed`. */
async function runWork<Tx, T>(run: Run<Tx, T>, tx: Tx): Promise<T | Rollback<T>> {
  try {
    return await run.call.work(tx, { keyHash: run.keyHash });
  } catch (error) {
    throw new WorkFailed(error);
  }
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

/**
 * The transaction rolled back, and the rollback freed the key: what that means for the
 * caller.
 */
function settleFailure<Tx, T>(
  run: Run<Tx, T>,
  error: unknown,
  storedResult: string | undefined,
): GuardResult<T> {
  if (error instanceof RolledBack) {
    // S12: the work asked for `rollback(value)`: the answer stands, nothing is stored.
    report(run, 'released', 'rolled back');
    return { value: error.rollback.value as T, replayed: false };
  }
  if (error instanceof WorkFailed) {
    report(run, 'released', 'work threw');
    throw error.cause;
  }
  if (error instanceof KeyTakenError) {
    report(run, 'failed', 'key taken');
    throw new IdempotencyError(
      'IDEMPOTENCY_KEY_IN_USE',
      `A record for idempotency key ${run.keyHash} was committed by another request while this attempt ran; this attempt was rolled back. Retry to get the stored result.`,
      { keyHash: run.keyHash, retryAfterSeconds: KEY_TAKEN_RETRY_AFTER_SECONDS, cause: error },
    );
  }
  if (IdempotencyError.is(error)) {
    // Result too large: rolled back, nothing was stored (S16).
    report(run, 'failed', error.code);
    throw error;
  }
  // Lock, completion or commit failed: the store is the problem (S15).
  throw storeUnavailable(run, 'store failed during the transaction', error, [
    run.call.key,
    ...(storedResult === undefined ? [] : [storedResult]),
  ]);
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
