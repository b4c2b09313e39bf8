/**
 * `mutation-guard/client`: the framework-free half that runs in the caller (SPEC S28, S29).
 * No Node-only imports: browsers, Node, Bun and workers. The tRPC, Apollo and urql helpers
 * live under `mutation-guard/client/trpc`, `/apollo` and `/urql`.
 */
export type { Fetch, IdempotentFetchOptions } from './fetch.js';
export { idempotentFetch } from './fetch.js';
export type { IdempotencyReceipt, KeyOptions } from './keys.js';
export {
  IDEMPOTENCY_KEY_HEADER,
  newIdempotencyKey,
  REPLAYED_HEADER,
  wasReplayed,
} from './keys.js';
export type { Outcome, RetryEvent, RetryOptions } from './retry.js';
export { backoff, RETRY_DEFAULTS, withRetries } from './retry.js';
export type { Answer, RetryReason, Verdict } from './verdict.js';
export { answerVerdict, codesInBody, networkVerdict, readRetryAfter } from './verdict.js';
