/**
 * `mutation-guard/client/urql`: an urql exchange that keys every mutation and retries it
 * with that same key (SPEC S28, S29). Queries and subscriptions pass through untouched.
 *
 * It writes the key into the operation's context (`idempotencyKey`, and the
 * `Idempotency-Key` header in `fetchOptions`) and gives the operation a `fetch` that retries
 * by the shared rules. A `retryExchange` re-executes the operation with its context, so its
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
import {
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyReceipt,
  type KeyOptions,
  newIdempotencyKey,
  wasReplayed,
} from '../keys.js';
import type { RetryOptions } from '../retry.js';
import { anySignal } from '../signals.js';
import { answerVerdict, codesInBody } from '../verdict.js';

export type { IdempotencyReceipt };

export interface IdempotencyExchangeOptions extends RetryOptions, KeyOptions {}

/**
 * Put it before `fetchExchange`: `exchanges: [cacheExchange, idempotencyExchange(),
 * fetchExchange]`. A call keys its own intent with `{ idempotencyKey: orderId }` in its
 * context and aborts with `{ signal }`.
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
  const key = typeof context.idempotencyKey === 'string' ? context.idempotencyKey : newKey();
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
  const fetchOptions =
    typeof context.fetchOptions === 'function' ? context.fetchOptions() : context.fetchOptions;
  return makeOperation(operation.kind, operation, {
    ...context,
    idempotencyKey: key,
    [RECEIPT]: receipt,
    fetchOptions: {
      ...fetchOptions,
      headers: { ...headersObject(fetchOptions?.headers), [IDEMPOTENCY_KEY_HEADER]: key },
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

function withReceipt(result: OperationResult): OperationResult {
  const receipt = result.operation.context[RECEIPT] as IdempotencyReceipt | undefined;
  if (result.operation.kind !== 'mutation' || !receipt) return result;
  return { ...result, extensions: { ...result.extensions, idempotency: { ...receipt } } };
}

function headersObject(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  return Object.fromEntries(new Headers(headers).entries());
}
