/**
 * SPEC S19 for tRPC: each `IdempotencyError` becomes a `TRPCError` whose code gives the
 * HTTP status, with the original as its `cause` so that an error formatter can hand the
 * SPEC code to clients.
 */
import { type TRPC_ERROR_CODE_KEY, TRPCError } from '@trpc/server';
import { IdempotencyError, type IdempotencyErrorCode } from '../core/errors.js';

const TRPC_CODES = {
  IDEMPOTENCY_KEY_INVALID: 'BAD_REQUEST',
  IDEMPOTENCY_KEY_MISSING: 'BAD_REQUEST',
  IDEMPOTENCY_KEY_REUSED: 'UNPROCESSABLE_CONTENT',
  IDEMPOTENCY_KEY_IN_USE: 'CONFLICT',
  IDEMPOTENCY_STORE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  IDEMPOTENCY_INPUT_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  IDEMPOTENCY_RESULT_TOO_LARGE: 'INTERNAL_SERVER_ERROR',
} as const satisfies Record<IdempotencyErrorCode, TRPC_ERROR_CODE_KEY>;

/** The `TRPCError` for an `IdempotencyError`; the original stays reachable as `cause`. */
export function toTRPCError(error: IdempotencyError): TRPCError {
  return new TRPCError({ code: TRPC_CODES[error.code], message: error.message, cause: error });
}

/** What `idempotencyErrorFormatter` adds to an error's `data`. */
export interface IdempotencyErrorData {
  /** The SPEC code, such as `IDEMPOTENCY_KEY_IN_USE`. */
  idempotencyCode: IdempotencyErrorCode;
  /** RFC 9457 `type`: a stable URN per code. */
  idempotencyType: string;
  /** RFC 9457 `title`. */
  idempotencyTitle: string;
  /** 409 only: seconds to wait before retrying (also sent as the `Retry-After` header). */
  retryAfterSeconds?: number;
}

/**
 * The mutation-guard details of a tRPC error, or `undefined` for any other error. Use it in
 * your own `errorFormatter`:
 *
 *   errorFormatter: ({ shape, error }) => ({
 *     ...shape,
 *     data: { ...shape.data, ...idempotencyErrorData(error) },
 *   })
 */
export function idempotencyErrorData(error: unknown): IdempotencyErrorData | undefined {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (!IdempotencyError.is(cause)) return undefined;
  return {
    idempotencyCode: cause.code,
    idempotencyType: cause.type,
    idempotencyTitle: cause.title,
    ...(cause.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: cause.retryAfterSeconds }),
  };
}

/**
 * An `errorFormatter` for `initTRPC.create({ errorFormatter: idempotencyErrorFormatter })`
 * when you have no formatter of your own: the default shape, plus `IdempotencyErrorData`
 * in `data` for mutation-guard errors.
 */
export function idempotencyErrorFormatter<TShape extends { data: object }>(opts: {
  shape: TShape;
  error: TRPCError;
}): TShape & { data: TShape['data'] & Partial<IdempotencyErrorData> } {
  const { shape, error } = opts;
  return { ...shape, data: { ...shape.data, ...idempotencyErrorData(error) } };
}
