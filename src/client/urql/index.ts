/**
 * `mutation-guard/client/urql`: an urql exchange that keys every mutation and retries it
 * with that same key (SPEC S28, S29). Queries and subscriptions pass through untouched.
 *
 * It writes the key into the operation's context (`idempotencyKey`, and the
 * `Idempotency-Key` header in `fetchOptions` unless the caller wrote one) and gives the
 * operation a `fetch` that retries by the shared rules. A `retryExchange` re-executes the operation with its context, so its
 * retries send the same key too; `retryIf` below gives it the same rules. The result carries
 * `extensions.idempotency: { key, replayed, attempts }`.
 */
import {
  type CombinedError,
  type Exchange,
  makeOperation,
  mapExchange,
  type Operation,
  type OperationResult,
} from '@urql/core';
import { idempotentFetch } from '../fetch.js';
import { keyHeaderValues, withKeyHeader } from '../headers.js';
import {
  type IdempotencyReceipt,
  type KeyOptions,
  newIdempotencyKey,
  wasReplayed,
} from '../keys.js';
import { KEY_INVALID, ownKey } from '../own-key.js';
import type { RetryOptions } from '../retry.js';
import { anySignal } from '../signals.js';
import { answerVerdict, codesInBody } from '../verdict.js';

export type { IdempotencyReceipt };

export interface IdempotencyExchangeOptions extends RetryOptions, KeyOptions {}

/**
 * Put it before `fetchExchange`: `exchanges: [cacheExchange, idempotencyExchange(),
 * fetchExchange]`. A call keys its own intent with `{ idempotencyKey: orderId }` in its
 * context (or an `Idempotency-Key` in its `fetchOptions.headers`) and aborts with
 * `{ signal }`.
 */
export function idempotencyExchange(options: IdempotencyExchangeOptions = {}): Exchange {
  const { newKey = newIdempotencyKey, ...retry } = options;
  return mapExchange({
    onOperation: (operation) =>
      operation.kind === 'mutation' ? keyed(operation, newKey, retry) : operation,
    onResult: withReceipt,
  });
}

/**
 * The same rules for `retryExchange({ retryIf })`: network errors, key in use, store
 * unavailable; never a refusal or the mutation's own errors, never after an abort.
 */
export function retryIf(error: CombinedError, operation: Operation): boolean {
  if ((operation.context.signal as AbortSignal | undefined)?.aborted) return false;
  if ((error.networkError as { code?: unknown } | undefined)?.code === KEY_INVALID) return false;
  if (error.networkError && !error.response) return true;
  const response = error.response as Partial<Response> | undefined;
  const status = typeof response?.status === 'number' ? response.status : 200;
  if (error.networkError && status < 400) return true; // an answer lost on the way
  const codes = codesInBody({ errors: error.graphQLErrors });
  return answerVerdict({ status, headers: response?.headers, codes }).retry;
}

const RECEIPT = 'idempotency';

function keyed(operation: Operation, newKey: () => string, retry: RetryOptions): Operation {
  const context = operation.context;
  // Already keyed: a retryExchange (or a cache) sent this operation round again.
  if (context[RECEIPT]) return operation;
  // Read once: a function could give other headers, even another key, each time it is called.
  const fetchOptions =
    typeof context.fetchOptions === 'function' ? context.fetchOptions() : context.fetchOptions;
  const headerValues = keyHeaderValues(fetchOptions?.headers);
  let own: string | undefined;
  try {
    own = ownKey([['context.idempotencyKey', context.idempotencyKey]], headerValues);
  } catch (error) {
    return refused(operation, error);
  }
  const key = own ?? newKey();
  const receipt: IdempotencyReceipt = { key, replayed: false, attempts: 0 };
  const callerSignal = context.signal as AbortSignal | undefined;
  const base = context.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const counted: typeof fetch = async (input, init) => {
    receipt.attempts += 1;
    const response = await base(input, init);
    receipt.replayed = wasReplayed(response);
    return response;
  };
  const retrying = idempotentFetch(counted, { ...retry, isMutation: () => true });
  return makeOperation(operation.kind, operation, {
    ...context,
    idempotencyKey: key,
    [RECEIPT]: receipt,
    fetchOptions: {
      ...fetchOptions,
      // The caller's own key header stays as written, in the shape it was written in.
      headers:
        headerValues.length > 0 ? fetchOptions?.headers : withKeyHeader(fetchOptions?.headers, key),
    },
    fetch: (input, init) =>
      retrying(input, {
        ...init,
        signal:
          callerSignal && init?.signal
            ? anySignal([callerSignal, init.signal])
            : (callerSignal ?? init?.signal ?? null),
      }),
  });
}

/**
 * A key the server would refuse ends the call before anything is sent: its `fetch` fails
 * with the reason, which urql hands over as the result's `networkError`, and `retryIf`
 * does not retry.
 */
function refused(operation: Operation, error: unknown): Operation {
  return makeOperation(operation.kind, operation, {
    ...operation.context,
    fetch: () => Promise.reject(error),
  });
}

function withReceipt(result: OperationResult): OperationResult {
  const receipt = result.operation.context[RECEIPT] as IdempotencyReceipt | undefined;
  if (result.operation.kind !== 'mutation' || !receipt) return result;
  return { ...result, extensions: { ...result.extensions, idempotency: { ...receipt } } };
}
