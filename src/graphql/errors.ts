import { createGraphQLError } from '@graphql-tools/utils';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { IdempotencyError } from '../index.js';

/**
 * Maps an `IdempotencyError` to the GraphQL surface (SPEC S19): the code in
 * `extensions.code`, RFC 9457 `type` and `title` beside it, and the HTTP status and
 * `Retry-After` under `extensions.http`, which Yoga turns into the response's status and
 * headers (and strips from the body). It is a plain `GraphQLError` with no original error,
 * so error masking passes its message through: it names only the key's hash (SPEC S26).
 */
export function toGraphQLError(error: IdempotencyError): GraphQLError {
  const headers =
    error.retryAfterSeconds === undefined
      ? undefined
      : { 'Retry-After': String(error.retryAfterSeconds) };
  return createGraphQLError(error.message, {
    extensions: {
      code: error.code,
      type: error.type,
      title: error.title,
      ...(error.keyHash === undefined ? {} : { keyHash: error.keyHash }),
      http: { status: error.status, ...(headers ? { headers } : {}) },
    },
  });
}

/** A result that answers the request with one error and no `data`: nothing ran. */
export function errorResult(error: GraphQLError): ExecutionResult {
  return { errors: [error] };
}
