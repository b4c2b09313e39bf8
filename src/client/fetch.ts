/**
 * `fetch` in, `fetch` out: each call that is a mutation gets one key (its own
 * `Idempotency-Key` header if it brings one, else a new one) and is retried with that same
 * key by the shared rules. Works for GraphQL POSTs and tRPC calls alike, in browsers, Node,
 * Bun and workers. The wrapped `fetch` gets the call as it was made, `init` and all, with
 * the key added to its headers.
 */
import { keyHeaderValues, withKeyHeader } from './headers.js';
import { IDEMPOTENCY_KEY_HEADER, type KeyOptions, newIdempotencyKey } from './keys.js';
import { ownKey } from './own-key.js';
import { RETRY_DEFAULTS, type RetryOptions, withRetries } from './retry.js';
import { answerVerdict, codesInBody, networkVerdict, type Verdict } from './verdict.js';

export type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

export interface IdempotentFetchOptions extends RetryOptions, KeyOptions {
  /**
   * Which requests are mutations to key and retry. Others pass through untouched.
   * @default every request but GET, HEAD and OPTIONS
   */
  isMutation?: (request: Request) => boolean;
}

/**
 * Wraps `fetch` (the global one by default). The answer is the last attempt's `Response`;
 * `wasReplayed(response)` tells whether the server replayed it. Abort with `init.signal`.
 */
export function idempotentFetch(base?: Fetch, options: IdempotentFetchOptions = {}): Fetch {
  const { isMutation = notSafeMethod, newKey = newIdempotencyKey, ...retry } = options;
  // Read the global at call time: tests and polyfills may replace it after this runs.
  const send: Fetch = base ?? ((input, init) => globalThis.fetch(input, init));
  return async function fetchWithIdempotency(input, init) {
    const request = new Request(input, init);
    const asGiven = !isRequest(input) && !readsOnce(init?.body);
    if (!isMutation(request)) return asGiven ? send(input, init) : send(request);
    // One key for the whole call, every retry included (SPEC S28): the caller's own, checked
    // before anything is sent, else a new one.
    const headers = init?.headers ?? (isRequest(input) ? input.headers : undefined);
    const own = ownKey([], keyHeaderValues(headers));
    const key = own ?? newKey();
    let attempt: () => Promise<Response>;
    if (asGiven) {
      // `init` as the caller gave it, the key added to its headers in their own shape: a
      // wrapping `fetch` that reads `init.headers` sees the key with the caller's headers.
      const keyed =
        own === undefined ? { ...init, headers: withKeyHeader(init?.headers, key) } : init;
      attempt = () => send(input, keyed);
    } else {
      // A Request's body, or a stream, can be sent only once: each attempt gets a fresh copy
      // of the Request, which carries the key.
      if (own === undefined) request.headers.set(IDEMPOTENCY_KEY_HEADER, key);
      attempt = () => send(request.clone());
    }
    return withRetries(attempt, judgeFetch, {
      ...RETRY_DEFAULTS,
      ...retry,
      signal: request.signal,
    });
  };
}

/** Duck-typed, as a polyfill's `Request` is not the global class. */
function isRequest(input: Request | string | URL): input is Request {
  return typeof input === 'object' && 'clone' in input && 'headers' in input;
}

/** A stream or an async iterable: gone once sent, unlike a string, a Blob or FormData. */
function readsOnce(body: RequestInit['body']): boolean {
  if (body === null || typeof body !== 'object') return false;
  return 'getReader' in body || Symbol.asyncIterator in body;
}

function notSafeMethod(request: Request): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(request.method.toUpperCase());
}

async function judgeFetch(
  outcome: { ok: true; value: Response } | { ok: false; error: unknown },
): Promise<Verdict> {
  if (!outcome.ok) return networkVerdict();
  const response = outcome.value;
  // Only a 409 needs its body read, to tell "key in use" from an application's conflict;
  // a clone leaves the body for the caller.
  const codes = response.status === 409 ? await codesOf(response.clone()) : [];
  return answerVerdict({ status: response.status, headers: response.headers, codes });
}

async function codesOf(response: Response): Promise<string[]> {
  try {
    return codesInBody(JSON.parse(await response.text()));
  } catch {
    return [];
  }
}
