/**
 * mutation-guard: the core. No framework and no driver: adapters (`mutation-guard/graphql`,
 * `mutation-guard/trpc`) and stores (`mutation-guard/sqlite`, `mutation-guard/postgres`)
 * build on what is exported here. What only a store's author needs is in
 * `mutation-guard/store`.
 */

export type { GuardCall, GuardResult } from './core/call.js';
export type {
  IdempotencyErrorCode,
  IdempotencyErrorDetails,
  IdempotencyErrorOptions,
} from './core/errors.js';
export { IDEMPOTENCY_ERRORS, IdempotencyError } from './core/errors.js';
export type { GuardEvent, GuardEventHandler, GuardEventType } from './core/events.js';
export type { FingerprintInput, FingerprintLimits } from './core/fingerprint.js';
export { FINGERPRINT_LIMITS, fingerprint } from './core/fingerprint.js';
export type { Guard, PurgeRequest } from './core/guard.js';
export { createGuard, MAX_OPERATION_NAME, retryAfterSeconds } from './core/guard.js';
export type { KeyCandidate, KeySource } from './core/keys.js';
export { MAX_KEY_LENGTH, parseKeyHeader, resolveKey, validateKey } from './core/keys.js';
export type { GuardOptions } from './core/options.js';
export { StoreFailure } from './core/redact.js';
export type { Rollback, RollbackOptions } from './core/rollback.js';
export { isRollback, rollback } from './core/rollback.js';
export type { Serializer } from './core/serializer.js';
export { jsonSerializer } from './core/serializer.js';
export type { SetupErrorHandler } from './core/setup-log.js';
// The vocabulary both adapters share (they export it too): options, context type, names.
export * from './core/vocabulary.js';
export type {
  IdempotencyStore,
  RecordKey,
  RecordOutcome,
  StoredRecord,
  StoreExtras,
} from './store/seam.js';
