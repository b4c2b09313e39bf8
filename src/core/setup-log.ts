/**
 * Telling the operator that the store is not set up. SPEC S15 answers such a failure with the
 * same masked 503 as an outage, and servers do not log an error they send on purpose, so
 * without this the server's log says nothing while every guarded mutation fails. The guard
 * hands the store's reason (a `StoreSetupError`'s message, scrubbed as S26 requires: what is
 * missing and the fix) to `onSetupError`, once per cause: a flood of requests that all fail
 * the same way logs one line, and a different cause logs again.
 */
import type { StoreFailure } from './redact.js';

/**
 * Receives a store's setup failure: `message` names what is missing and the fix; `failure`
 * is the redacted store error (its `code`, `errorClasses`, `setupReason`).
 */
export type SetupErrorHandler = (message: string, failure: StoreFailure) => void;

/** The handler when neither the guard nor the adapter names one. */
export const logSetupError: SetupErrorHandler = (message) => {
  console.error(message);
};

/** The cause each guard told last, by its resolved options. */
const lastTold = new WeakMap<object, string>();

/**
 * Tells `handler` of `failure` if the store is not set up and this guard has not just told of
 * the same cause. An error the handler throws is ignored: logging must not change the answer.
 */
export function tellSetupFailure(
  guard: object,
  failure: StoreFailure,
  handler: SetupErrorHandler,
): void {
  const reason = failure.setupReason;
  if (reason === undefined || lastTold.get(guard) === reason) return;
  lastTold.set(guard, reason);
  try {
    handler(
      `${reason} Until then every guarded mutation answers 503 IDEMPOTENCY_STORE_UNAVAILABLE (logged once per cause).`,
      failure,
    );
  } catch {
    // As with onEvent: an observer never changes the outcome of a mutation.
  }
}
