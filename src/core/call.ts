/**
 * One guarded call, as an adapter (or an app) hands it to `guard.run`, and what the guard
 * answers. Kept apart from guard.ts, which decides, so that the modules that carry a call
 * through its steps (run.ts, guard-work.ts) read these types without importing the guard.
 */
import type { Rollback } from './rollback.js';
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
