import { createGraphQLError } from '@graphql-tools/utils';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { IdempotencyError } from '../index.js';

/** The response header that tells a client when to retry a 409 (SPEC S10). */
export const RETRY_AFTER_HEADER = 'Retry-After';

/**
 * The details every mutation-guard error carries to clients, on both surfaces (SPEC S19):
 * the code, RFC 9457 `type` and `title`, the HTTP status, the key's hash (S26) and, for a
 * 409, the seconds to wait. GraphQL puts them in `extensions` under these names.
 */
export interface IdempotencyErrorExtensions {
  code: IdempotencyError['code'];
  type: string;
  title: string;
  status: number;
  keyHash?: string;
  retryAfterSeconds?: number;
}

/**
 * Maps an `IdempotencyError` to the GraphQL surface (SPEC S19): the details above in
 * `extensions`, and the HTTP status and `Retry-After` under `extensions.http`, which Yoga
 * turns into the response's status and headers (and strips from the body). It is a plain
 * `GraphQLError` with no original error, so error masking passes its message through: it
 * names only the key's hash (SPEC S26).
 */
export function toGraphQLError(error: IdempotencyError): GraphQLError {
  const extensions: IdempotencyErrorExtensions = {
    code: error.code,
    type: error.type,
    title: error.title,
    status: error.status,
    ...(error.keyHash === undefined ? {} : { keyHash: error.keyHash }),
    ...(error.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: error.retryAfterSeconds }),
  };
  const headers =
    error.retryAfterSeconds === undefined
      ? undefined
      : { [RETRY_AFTER_HEADER]: String(error.retryAfterSeconds) };
  return createGraphQLError(error.message, {
    extensions: { ...extensions, http: { status: error.status, ...(headers ? { headers } : {}) } },
  });
}

/** A result that answers the request with one error and no `data`: nothing ran. */
export function errorResult(error: GraphQLError): ExecutionResult {
  return { errors: [error] };
}
