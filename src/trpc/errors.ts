/**
 * SPEC S19 for tRPC: each `IdempotencyError` becomes a `TRPCError` whose code gives the
 * HTTP status, with the original as its `cause` so that an error formatter can hand the
 * SPEC code to clients.
 */
import { type TRPC_ERROR_CODE_KEY, TRPCError } from '@trpc/server';
import { errorDetails, IdempotencyError, type IdempotencyErrorCode } from '../core/errors.js';

/**
 * The tRPC code for each HTTP status the core's code table uses. Keyed by status rather than
 * by code, so that a code the core adds maps to its status without a change here (an input
 * over the fingerprint's bounds, 413, answers PAYLOAD_TOO_LARGE); a status missing here
 * answers INTERNAL_SERVER_ERROR.
 */
const TRPC_CODE_BY_STATUS: Readonly<Record<number, TRPC_ERROR_CODE_KEY>> = {
  400: 'BAD_REQUEST',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'UNPROCESSABLE_CONTENT',
  503: 'SERVICE_UNAVAILABLE',
};

/** The `TRPCError` for an `IdempotencyError`; the original stays reachable as `cause`. */
export function toTRPCError(error: IdempotencyError): TRPCError {
  const code = TRPC_CODE_BY_STATUS[error.status] ?? 'INTERNAL_SERVER_ERROR';
  return new TRPCError({ code, message: error.message, cause: error });
}

/**
 * What `idempotencyErrorFormatter` adds to an error's `data`: the details GraphQL errors
 * carry in `extensions` (SPEC S19), prefixed so that they never collide with tRPC's own
 * `data` fields (`code`, `httpStatus`).
 */
export interface IdempotencyErrorData {
  /** The SPEC code, such as `IDEMPOTENCY_KEY_IN_USE`. */
  idempotencyCode: IdempotencyErrorCode;
  /** RFC 9457 `type`: a stable URN per code. */
  idempotencyType: string;
  /** RFC 9457 `title`. */
  idempotencyTitle: string;
  /** The HTTP status of the SPEC code (also the response's status). */
  idempotencyStatus: number;
  /** A short hash of the key (SPEC S26), where the error concerns one key. */
  idempotencyKeyHash?: string;
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
  const { code, type, title, status, keyHash, retryAfterSeconds } = errorDetails(cause);
  return {
    idempotencyCode: code,
    idempotencyType: type,
    idempotencyTitle: title,
    idempotencyStatus: status,
    ...(keyHash === undefined ? {} : { idempotencyKeyHash: keyHash }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
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
