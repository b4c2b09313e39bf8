/**
 * mutation-guard/store: for authors of a store (another database, or a wrapper around one in
 * tests). The seam the guard calls (`IdempotencyStore`), the types it speaks in, the errors a
 * store throws when a record was committed for its key meanwhile or the database is not set
 * up, and the helpers the guard derives keys and fingerprints with, so that a store can read
 * the records the guard writes. Apps need none of it: `createGuard({ store: sqliteStore(db) })`
 * with `mutation-guard/sqlite` or `mutation-guard/postgres`.
 */
export { canonicalize } from '../core/fingerprint.js';
export { hashKey } from '../core/hash.js';
export type { ResolvedGuardOptions } from '../core/options.js';
export { GUARD_DEFAULTS } from '../core/options.js';
export type {
  ClaimAndRunResult,
  ClaimRequest,
  CompletionRecord,
  IdempotencyStore,
  PurgeOptions,
  RecordKey,
  RecordOutcome,
  StoredRecord,
  StoreExtras,
  WorkEnding,
} from './seam.js';
export { KeyTakenError } from './seam.js';
export { StoreSetupError } from './setup-error.js';
