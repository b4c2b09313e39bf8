/**
 * The one error class of mutation-guard. Every rejection the guard makes is an
 * `IdempotencyError` with a `code` from SPEC S1-S16; the GraphQL and tRPC adapters map
 * that code once, each to its own surface (SPEC S19).
 */

/** The codes a client can see, with the HTTP status and RFC 9457 title each maps to. */
export const IDEMPOTENCY_ERRORS = {
  /** S1, S2, S18, S20: a key that is malformed, ambiguous, or given twice with different values. */
  IDEMPOTENCY_KEY_INVALID: { status: 400, title: 'Invalid idempotency key' },
  /** S3: a guarded mutation without a key. */
  IDEMPOTENCY_KEY_MISSING: { status: 400, title: 'Idempotency key missing' },
  /** S6: the key was used before for a different request. */
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  /** S10: another request holds the key right now. */
  IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'Idempotency key in use' },
  /** S15: the store failed, so the mutation was not run. */
  IDEMPOTENCY_STORE_UNAVAILABLE: { status: 503, title: 'Idempotency store unavailable' },
  /**
   * The request (operation and input) is larger or nests deeper than the guard fingerprints
   * (`maxInputBytes`, `maxInputDepth`); refused before any claim, nothing stored.
   */
  IDEMPOTENCY_INPUT_TOO_LARGE: { status: 413, title: 'Idempotent request too large' },
  /** S16: the result was too large to store, so the mutation was rolled back. */
  IDEMPOTENCY_RESULT_TOO_LARGE: { status: 500, title: 'Idempotent result too large' },
} as const satisfies Record<string, { status: number; title: string }>;

export type IdempotencyErrorCode = keyof typeof IDEMPOTENCY_ERRORS;

export interface IdempotencyErrorOptions {
  /** Seconds a client should wait before retrying (409 only). */
  retryAfterSeconds?: number;
  /** Short hash of the key (SPEC S26): safe to log, never the key itself. */
  keyHash?: string;
  cause?: unknown;
}

/**
 * What every mutation-guard error carries to clients, on both surfaces (SPEC S19): the code,
 * RFC 9457 `type` and `title`, the HTTP status, the key's hash (S26) and, for a 409, the
 * seconds to wait. GraphQL puts them in `extensions` as they are; tRPC in `data`, prefixed.
 */
export interface IdempotencyErrorDetails {
  code: IdempotencyErrorCode;
  type: string;
  title: string;
  status: number;
  keyHash?: string;
  retryAfterSeconds?: number;
}

// A registered symbol, so that two copies of the package (ESM and CJS, or two versions)
// still recognise each other's errors.
const brand = Symbol.for('mutation-guard.IdempotencyError');

export class IdempotencyError extends Error {
  override readonly name = 'IdempotencyError';
  readonly code: IdempotencyErrorCode;
  /** The HTTP status this error answers with. */
  readonly status: number;
  /** RFC 9457 `title`. */
  readonly title: string;
  /** RFC 9457 `type`: a stable URN per code. */
  readonly type: string;
  readonly retryAfterSeconds: number | undefined;
  readonly keyHash: string | undefined;
  readonly [brand] = true;

  constructor(code: IdempotencyErrorCode, message: string, options: IdempotencyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = IDEMPOTENCY_ERRORS[code].status;
    this.title = IDEMPOTENCY_ERRORS[code].title;
    this.type = `urn:mutation-guard:error:${code.slice('IDEMPOTENCY_'.length).toLowerCase().replaceAll('_', '-')}`;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.keyHash = options.keyHash;
  }

  /** True for any mutation-guard error, also one thrown by another copy of the package. */
  static is(value: unknown): value is IdempotencyError {
    return hasBrand(value, brand);
  }
}

/** The details of `error` a client may see, without the absent ones. */
export function errorDetails(error: IdempotencyError): IdempotencyErrorDetails {
  return {
    code: error.code,
    type: error.type,
    title: error.title,
    status: error.status,
    ...(error.keyHash === undefined ? {} : { keyHash: error.keyHash }),
    ...(error.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: error.retryAfterSeconds }),
  };
}

/**
 * Whether `value` carries the registered symbol `brand`: how the package's error classes know
 * their instances across copies of the package, where `instanceof` cannot.
 */
export function hasBrand(value: unknown, brand: symbol): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[brand] === true
  );
}

/**
 * A mistake in the app's setup (an option missing, or one that returned the wrong kind of
 * value): a `TypeError` for the server's log, in the one form every message of the package
 * takes, `mutation-guard: ...`. It is never an `IdempotencyError`: clients see a masked 500.
 */
export function setupError(message: string): TypeError {
  return new TypeError(`mutation-guard: ${message}`);
}
