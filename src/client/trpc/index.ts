/**
 * `mutation-guard/client/trpc`: a tRPC v11 link that keys every mutation and retries it with
 * the same key (SPEC S28, S29). Queries and subscriptions pass through untouched.
 *
 * The key goes in the input's `idempotencyKey`, not in a header: with `httpBatchLink` one
 * header would key several calls of one request, which the server refuses (SPEC S20), while
 * a key inside each call's input works batched or not. The procedure's input must accept an
 * optional `idempotencyKey`. A mutation whose input is not a plain object (or none) cannot
 * carry one and passes through unkeyed and unretried.
 *
 * The caller's own key comes from the input or `context.idempotencyKey`. A header set by the
 * HTTP link's `headers` option is out of this link's sight (that option is read after it
 * runs): the server refuses it beside a different key in the input (SPEC S1).
 */
import {
  type Operation,
  type OperationResultEnvelope,
  TRPCClientError,
  type TRPCLink,
} from '@trpc/client';
import type { AnyTRPCRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import {
  type IdempotencyReceipt,
  type KeyOptions,
  newIdempotencyKey,
  wasReplayed,
} from '../keys.js';
import { ownKey } from '../own-key.js';
import { type Outcome, RETRY_DEFAULTS, type RetryOptions, withRetries } from '../retry.js';
import { anySignal } from '../signals.js';
import { answerVerdict, networkVerdict, type Verdict } from '../verdict.js';

export type { IdempotencyReceipt };

export interface IdempotencyLinkOptions extends RetryOptions, KeyOptions {}

type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyTRPCRouter>>;

/**
 * Put it before the terminating link: `links: [idempotencyLink(), httpBatchLink({ url })]`.
 * Pass a `context` object to a call to read its receipt afterwards:
 * `const context = {}; await client.pay.mutate(input, { context }); context.idempotency`.
 */
export function idempotencyLink<TRouter extends AnyTRPCRouter>(
  options: IdempotencyLinkOptions = {},
): TRPCLink<TRouter> {
  const { newKey = newIdempotencyKey, ...retry } = options;
  return () =>
    ({ op, next }) => {
      if (op.type !== 'mutation' || !isPlainObject(op.input)) return next(op);
      const input = op.input as Record<string, unknown>;
      return observable<Envelope, TRPCClientError<AnyTRPCRouter>>((observer) => {
        // A key the caller set (an order id) is the intent's; else a new one. One the server
        // would refuse fails the call here, before anything is sent.
        let key: string;
        try {
          key =
            ownKey([
              ['the input', input.idempotencyKey],
              ['context.idempotencyKey', op.context.idempotencyKey],
            ]) ?? newKey();
        } catch (error) {
          observer.error(TRPCClientError.from(error as Error));
          return;
        }
        // Stops the waits and the attempt in flight: the caller's signal or an unsubscribe.
        const stop = new AbortController();
        const signal = op.signal ? anySignal([op.signal, stop.signal]) : stop.signal;
        const keyed: Operation = { ...op, input: { ...input, idempotencyKey: key }, signal };
        let attempts = 0;
        withRetries(
          (n) => {
            attempts = n;
            return attempt(next, keyed, signal);
          },
          judgeTrpc,
          { ...RETRY_DEFAULTS, ...retry, signal },
        ).then(
          (envelope) => {
            const response = (envelope.context as { response?: Response } | undefined)?.response;
            const replayed = response !== undefined && wasReplayed(response);
            op.context.idempotency = { key, replayed, attempts } satisfies IdempotencyReceipt;
            observer.next(envelope);
            observer.complete();
          },
          (error: unknown) => observer.error(TRPCClientError.from(error as Error)),
        );
        return () => stop.abort();
      });
    };
}

/** One pass down the rest of the chain, as a promise of its (single) result. */
function attempt(
  next: (op: Operation) => {
    subscribe(observer: {
      next(value: Envelope): void;
      error(error: unknown): void;
      complete(): void;
    }): { unsubscribe(): void };
  },
  op: Operation,
  signal: AbortSignal,
): Promise<Envelope> {
  return new Promise((resolve, reject) => {
    let last: Envelope | undefined;
    const subscription = next(op).subscribe({
      next: (value) => {
        last = value;
      },
      error: reject,
      complete: () =>
        last ? resolve(last) : reject(new Error('tRPC link completed without a result')),
    });
    signal.addEventListener('abort', () => subscription.unsubscribe(), { once: true });
  });
}

/**
 * A `TRPCClientError` with an error shape is the server's answer; without one, no answer
 * arrived (or it could not be read), and the outcome is unknown.
 */
function judgeTrpc(outcome: Outcome<Envelope>): Verdict {
  if (outcome.ok) return { retry: false };
  const error = outcome.error as Partial<TRPCClientError<AnyTRPCRouter>>;
  const response = (error.meta as { response?: Response } | undefined)?.response;
  const data = error.data as { httpStatus?: unknown; idempotencyCode?: unknown } | undefined;
  const status = typeof data?.httpStatus === 'number' ? data.httpStatus : response?.status;
  if (error.shape === undefined) {
    // No tRPC body: a proxy's error page is judged by its status; a 2xx whose body could
    // not be read is an answer lost on the way, as good as none.
    return status !== undefined && status >= 400
      ? answerVerdict({ status, headers: response?.headers })
      : networkVerdict();
  }
  const codes = typeof data?.idempotencyCode === 'string' ? [data.idempotencyCode] : [];
  return answerVerdict({ status: status ?? 500, headers: response?.headers, codes });
}

function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
