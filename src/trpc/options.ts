import type { TRPCError } from '@trpc/server';
import type { Guard } from '../core/guard.js';
import type { HeadersLike, RequestInfoLike, ResponseHeadersLike } from './request.js';

/** Options of `idempotency()`. `TContext` is your tRPC context (annotate `scope`'s parameter). */
export interface IdempotencyMiddlewareOptions<TContext extends object = object, Tx = unknown> {
  /** The guard from `createGuard({ store, serializer: superjson })`: its store decides `Tx`. */
  guard: Guard<Tx>;
  /**
   * Whose key it is (SPEC S4): the tenant, account or user id. Records are unique on
   * (scope, key), so one user's key never replays another's result. Throw (for example an
   * `UNAUTHORIZED` TRPCError) to reject the call before anything is claimed.
   * @default one global scope, `'global'`, with one warning when the middleware is created
   */
  scope?: (ctx: TContext) => string | Promise<string>;
  /**
   * A guarded mutation without a key is rejected with 400 `IDEMPOTENCY_KEY_MISSING` (SPEC S3).
   * `false` runs it unguarded instead; `ctx.idempotency` is then `undefined`.
   * @default true
   */
  required?: boolean;
  /**
   * The request's headers, to read `Idempotency-Key` from.
   * @default `ctx.req.headers` (fetch adapter's `Request`, standalone / node-http / Express
   * `IncomingMessage`), else `ctx.headers` (Next.js style contexts); `undefined` for
   * `createCaller`, which has no request
   */
  headers?: (ctx: TContext) => HeadersLike | undefined;
  /**
   * A key supplied by the server itself, for server-side callers without headers (SPEC S1).
   * @default `ctx.idempotencyKey` when the context has one
   */
  contextKey?: (ctx: TContext) => unknown;
  /**
   * Where `Idempotent-Replayed: true` (SPEC S9) and `Retry-After` (S10) are written.
   * @default `ctx.resHeaders` (fetch adapter), else `ctx.res.setHeader` (standalone /
   * node-http / Express), else `ctx.res.raw.setHeader` (a Fastify reply); nothing for
   * `createCaller`
   */
  responseHeaders?: (ctx: TContext) => ResponseHeadersLike | undefined;
  /**
   * The tRPC request info that `createContext` receives as `info`; with it the middleware
   * sees every call of a batch (SPEC S20). Without it a batch is recognised from the URL,
   * and a header key is then refused for any batch of more than one call.
   * @default `ctx.info`
   */
  requestInfo?: (ctx: TContext) => RequestInfoLike | undefined;
  /**
   * Declares a procedure's error final, Stripe-style (SPEC S12): its writes still roll back,
   * but the error is stored and replayed to every retry instead of freeing the key. Only
   * for deliberate business errors (a declined card); the stored part is the error's code
   * and message, never its cause.
   * @default () => false (every error frees the key for a fresh attempt)
   */
  isFinalError?: (error: TRPCError) => boolean;
  /**
   * How long results of these procedures are replayed, in milliseconds (SPEC S14).
   * @default the guard's `retention`
   */
  retention?: number;
}

/** The scope used when no `scope` option is given. */
export const GLOBAL_SCOPE = 'global';

export const TRPC_DEFAULTS = {
  required: true,
  isFinalError: (_error: TRPCError): boolean => false,
  contextKey: (ctx: object): unknown => (ctx as { idempotencyKey?: unknown }).idempotencyKey,
} as const;
