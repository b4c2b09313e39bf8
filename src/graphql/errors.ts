import { type ExecutionResult, GraphQLError } from 'graphql';
import {
  errorDetails,
  type IdempotencyError,
  type IdempotencyErrorDetails,
} from '../core/errors.js';
import { RETRY_AFTER_HEADER } from '../core/vocabulary.js';

/**
 * The `extensions` of a mutation-guard error on GraphQL (SPEC S19): the details every such
 * error carries to clients on both surfaces, under the core's names (tRPC prefixes them).
 */
export type IdempotencyErrorExtensions = IdempotencyErrorDetails;

/**
 * Maps an `IdempotencyError` to the GraphQL surface (SPEC S19): the details above in
 * `extensions`, and the HTTP status and `Retry-After` under `extensions.http`, which Yoga
 * turns into the response's status and headers (and strips from the body). It is a plain
 * `GraphQLError` with no original error, so error masking passes its message through: it
 * names only the key's hash (SPEC S26).
 */
export function toGraphQLError(error: IdempotencyError): GraphQLError {
  const extensions: IdempotencyErrorExtensions = errorDetails(error);
  const headers =
    error.retryAfterSeconds === undefined
      ? undefined
      : { [RETRY_AFTER_HEADER]: String(error.retryAfterSeconds) };
  return new GraphQLError(error.message, {
    extensions: { ...extensions, http: { status: error.status, ...(headers ? { headers } : {}) } },
  });
}

/** A result that answers the request with one error and no `data`: nothing ran. */
export function errorResult(error: GraphQLError): ExecutionResult {
  return { errors: [error] };
}
