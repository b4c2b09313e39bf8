/**
 * The error a store throws when the database is not set up as it needs: its records table,
 * a function or a column of its migrations, or the database role's right to use them is
 * missing. That is not an outage: every guarded mutation fails the same way until an operator
 * acts. The guard still fails closed with 503 (SPEC S15), and tells the operator this error's
 * message once per cause (`onSetupError` of `createGuard`), so the message names what is
 * missing and the fix. It must hold no raw key and no stored answer (S26); the guard scrubs it
 * of both anyway.
 */
import { hasBrand } from '../core/errors.js';

const brand = Symbol.for('mutation-guard.StoreSetupError');

export class StoreSetupError extends Error {
  override readonly name = 'StoreSetupError';
  readonly [brand] = true;

  /** True for a `StoreSetupError`, also one thrown by another copy of the package. */
  static is(value: unknown): value is StoreSetupError {
    return hasBrand(value, brand);
  }
}
