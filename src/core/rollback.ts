/**
 * How guarded work says "roll my writes back" without throwing. GraphQL resolvers' errors
 * and tRPC's `{ ok: false }` do not throw, yet their transaction must not commit
 * (SPEC S12): the adapters wrap such a result in `rollback(...)`.
 */
const brand = Symbol.for('mutation-guard.Rollback');

export interface Rollback<T> {
  readonly [brand]: true;
  readonly value: T;
  /** Store the value and replay it to retries (a declared final business error). */
  readonly keep: boolean;
}

export interface RollbackOptions {
  /**
   * Keep the result and replay it to every retry, Stripe-style, instead of freeing the key
   * for a fresh attempt. Only for final business errors (a declined card): never for an
   * unexpected error, whose text would bypass error masking.
   * @default false
   */
  keep?: boolean;
}

/** Rolls back the guarded transaction and answers with `value`. */
export function rollback<T>(value: T, options: RollbackOptions = {}): Rollback<T> {
  return { [brand]: true, value, keep: options.keep ?? false };
}

export function isRollback<T>(value: unknown): value is Rollback<T> {
  return typeof value === 'object' && value !== null && (value as Rollback<T>)[brand] === true;
}
