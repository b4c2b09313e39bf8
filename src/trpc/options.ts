import type { TRPCError } from '@trpc/server';
import type { AdapterOptions } from '../core/vocabulary.js';
import type { RequestInfoLike, ResponseHeadersLike } from './request.js';

/**
 * Options of `idempotency()`: those both adapters share (`guard`, `scope`, `required`,
 * `isFinalError`, `retention` in milliseconds, `keyHeader`), and tRPC's own. `TContext` is
 * your tRPC context (annotate `scope`'s parameter).
 *
 * `isFinalError` stores the error's code and message, never its cause. `keyHeader` defaults
 * to `readKeyHeader`, which reads the headers of `ctx.request`, else `ctx.req` (the fetch
 * adapter's `Request`, or the `IncomingMessage` of the standalone, node-http, Express and
 * Fastify adapters), else `ctx.headers` (Next.js style contexts); `createCaller` has no
 * request, so no header.
 * Without a key, `ctx.idempotency` is `undefined` when `required` is `false`.
 */
export interface IdempotencyMiddlewareOptions<TContext extends object = object, Tx = unknown>
  extends AdapterOptions<TContext, Tx, TRPCError> {
  /**
   * A key the server supplies itself, for server-side callers without headers such as
   * `createCaller` (SPEC S1). It must agree with any key the client sent.
   * @default readServerKey: `ctx.idempotencyKey` when the context has one
   */
  serverKey?: (ctx: TContext) => unknown;
  /**
   * Where `Idempotent-Replayed: true` (SPEC S9) and `Retry-After` (S10) are written.
   * @default readResponseHeaders: `ctx.resHeaders` (fetch adapter), else `ctx.res.setHeader`
   * (standalone / node-http / Express), else `ctx.res.raw.setHeader` (a Fastify reply);
   * nothing for `createCaller`
   */
  responseHeaders?: (ctx: TContext) => ResponseHeadersLike | undefined;
  /**
   * The tRPC request info that `createContext` receives as `info`; with it the middleware
   * sees every call of a batch (SPEC S20). Without it a batch is recognised from the URL,
   * and a header key is then refused for any batch of more than one call.
   * @default readRequestInfo: `ctx.info`
   */
  requestInfo?: (ctx: TContext) => RequestInfoLike | undefined;
}

/** The default `serverKey`: `ctx.idempotencyKey`, when the context has one. */
export function readServerKey(ctx: object): unknown {
  return (ctx as { idempotencyKey?: unknown }).idempotencyKey;
}
