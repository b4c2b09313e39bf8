/**
 * `mutation-guard/client/apollo`: an Apollo Client 4 link that keys every mutation and
 * retries it itself with that same key (SPEC S28, S29). Queries and subscriptions pass
 * through untouched.
 *
 * The key is kept in the operation's context (`idempotencyKey`) and sent as the
 * `Idempotency-Key` header, so a `RetryLink` anywhere in the chain re-sends the same key. The
 * answer carries `extensions.idempotency: { key, replayed, attempts }`.
 */
import { ApolloLink } from '@apollo/client/link';
import { Observable, throwError } from 'rxjs';
import { keyHeaderValues } from '../headers.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyReceipt,
  type KeyOptions,
  newIdempotencyKey,
  wasReplayed,
} from '../keys.js';
import { ownKey } from '../own-key.js';
import { type Outcome, RETRY_DEFAULTS, type RetryOptions, withRetries } from '../retry.js';
import { anySignal } from '../signals.js';
import { answerVerdict, codesInBody, networkVerdict, type Verdict } from '../verdict.js';

export type { IdempotencyReceipt };

export interface IdempotencyLinkOptions extends RetryOptions, KeyOptions {}

/**
 * Put it before the HTTP link: `ApolloLink.from([idempotencyLink(), new HttpLink({ uri })])`.
 * A call keys its own intent with `context: { idempotencyKey: orderId }` (or an
 * `Idempotency-Key` in `context.headers`) and aborts with
 * `context: { fetchOptions: { signal } }`.
 */
export function idempotencyLink(options: IdempotencyLinkOptions = {}): ApolloLink {
  const { newKey = newIdempotencyKey, ...retry } = options;
  return new ApolloLink(function keyAndRetry(operation, forward) {
    if (operation.operationType !== 'mutation') return forward(operation);
    const context = operation.getContext() as {
      idempotencyKey?: unknown;
      headers?: Record<string, string>;
      fetchOptions?: { signal?: AbortSignal };
    };
    // A key the caller set, in either place, is the intent's (SPEC S28); a header it wrote
    // is then left exactly as written. One the server would refuse fails the call here.
    const headerValues = keyHeaderValues(context.headers);
    let own: string | undefined;
    try {
      own = ownKey([['context.idempotencyKey', context.idempotencyKey]], headerValues);
    } catch (error) {
      return throwError(() => error);
    }
    const key = own ?? newKey();
    operation.setContext({
      idempotencyKey: key,
      headers:
        headerValues.length > 0
          ? context.headers
          : { ...context.headers, [IDEMPOTENCY_KEY_HEADER]: key },
    });
    const callerSignal = context.fetchOptions?.signal;

    return new Observable<ApolloLink.Result>((observer) => {
      const stop = new AbortController();
      const signal = callerSignal ? anySignal([callerSignal, stop.signal]) : stop.signal;
      let attempts = 0;
      withRetries(
        (n) => {
          attempts = n;
          return once(forward(operation), signal);
        },
        (outcome) => judgeApollo(outcome, operation.getContext().response as Response | undefined),
        { ...RETRY_DEFAULTS, ...retry, signal },
      ).then(
        (result) => {
          const response = operation.getContext().response as Response | undefined;
          const receipt: IdempotencyReceipt = {
            key,
            replayed: replayedIn(result, response),
            attempts,
          };
          observer.next({ ...result, extensions: { ...result.extensions, idempotency: receipt } });
          observer.complete();
        },
        (error: unknown) => observer.error(error),
      );
      return () => stop.abort();
    });
  });
}

/** The header, or the body's `extensions.idempotency.replayed` for servers that put it there. */
function replayedIn(result: ApolloLink.Result, response: Response | undefined): boolean {
  if (response && wasReplayed(response)) return true;
  const inBody = (result.extensions as { idempotency?: { replayed?: unknown } } | undefined)
    ?.idempotency?.replayed;
  return inBody === true;
}

/** One pass down the rest of the chain, as a promise of its last result. */
function once(
  results: Observable<ApolloLink.Result>,
  signal: AbortSignal,
): Promise<ApolloLink.Result> {
  return new Promise((resolve, reject) => {
    let last: ApolloLink.Result | undefined;
    const subscription = results.subscribe({
      next: (value) => {
        last = value;
      },
      error: reject,
      complete: () => (last ? resolve(last) : reject(new Error('Apollo link gave no result'))),
    });
    signal.addEventListener(
      'abort',
      () => {
        subscription.unsubscribe();
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * A GraphQL answer (errors in the body, 409 or 503 included) is judged by its status and
 * codes; an error with a `response` is a non-GraphQL HTTP answer; anything else means no
 * answer arrived.
 */
function judgeApollo(outcome: Outcome<ApolloLink.Result>, response: Response | undefined): Verdict {
  if (outcome.ok) {
    const codes = codesInBody(outcome.value);
    return answerVerdict({ status: response?.status ?? 200, headers: response?.headers, codes });
  }
  // Duck-typed: a polyfilled fetch's Response is not the global class.
  const answered = (outcome.error as { response?: Partial<Response> } | null)?.response;
  // A 2xx whose body could not be read is an answer lost on the way, as good as none.
  if (typeof answered?.status !== 'number' || answered.status < 400) return networkVerdict();
  const bodyText = (outcome.error as { bodyText?: unknown }).bodyText;
  const codes = typeof bodyText === 'string' ? codesOf(bodyText) : [];
  return answerVerdict({ status: answered.status, headers: answered.headers, codes });
}

function codesOf(text: string): string[] {
  try {
    return codesInBody(JSON.parse(text));
  } catch {
    return [];
  }
}
