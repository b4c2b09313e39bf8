/**
 * Once the key is ours (SPEC S8, S12, S16): the work and its stored result in one
 * transaction, in either of S11's models, and what a failure means for the key and the
 * caller. guard.ts decides when to get here.
 *
 * - the lease model (`runUnderLease`): the claim is held already; the store's `transaction`
 *   runs the work, the fenced `complete` stores the result with it, and a failure releases
 *   the claim (or keeps a final error, written after the rollback);
 * - the one-transaction model (`claimAndRun`): the store claims and runs in one transaction;
 *   a rollback frees the key by itself, and a kept final error is written in that same
 *   transaction.
 */
import {
  type ClaimAndRunResult,
  type ClaimResult,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
} from '../store/seam.js';
import { IdempotencyError } from './errors.js';
import type { GuardResult } from './guard.js';
import { isRollback, type Rollback } from './rollback.js';
import {
  type ClaimedRun,
  claimedRun,
  claimRequest,
  type Found,
  type Run,
  report,
  storeUnavailable,
} from './run.js';

/** The `Retry-After` of the 409 for a claim lost to a takeover: its result is stored soon. */
const TAKEN_OVER_RETRY_AFTER_SECONDS = 1;

/**
 * The lease model: the key is claimed; run the work and store its result in one transaction
 * (S8).
 */
export async function runUnderLease<Tx, T>(
  run: Run<Tx, T>,
  claim: Extract<ClaimResult, { status: 'claimed' }>,
): Promise<GuardResult<T>> {
  report(run, claim.takenOver ? 'taken-over' : 'claimed');
  const { scope, key } = run.call;
  const fence = { scope, key, token: claim.token };
  const claimed = claimedRun(run, fence, () => releaseQuietly(run, fence));
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
export async function claimAndRun<Tx, T>(run: Run<Tx, T>): Promise<Found<T>> {
  const { guard, call } = run;
  const claimed = claimedRun(
    run,
    { scope: call.scope, key: call.key, token: '' },
    releasedByRollback,
  );
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
    if (!started) throw storeUnavailable(run, 'store failed during claim', error, [call.key]);
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
  const { fence, storedResult } = run;
  throw storeUnavailable(run, 'store failed during the transaction', error, [
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
    throw storeUnavailable(run, 'store failed storing a kept error', error, [
      run.fence.key,
      result,
    ]);
  }
}

/** Under `claimAndRun` a rollback freed the key already: nothing to release. */
async function releasedByRollback(): Promise<void> {}

async function releaseQuietly<Tx, T>(run: Run<Tx, T>, fence: Fence): Promise<void> {
  try {
    await run.guard.store.release(fence);
  } catch {
    // The lease will expire and a retry will take over; nothing was committed.
  }
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
