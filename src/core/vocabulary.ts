/**
 * The one vocabulary of the GraphQL and tRPC adapters: the options both take, what a guarded
 * resolver or procedure finds in its context, the header and field names, the scope used
 * without a `scope` option, and the default key-header reader. Everything here is public:
 * `mutation-guard` and both adapters export this module whole, so the three never drift.
 * Each adapter adds only what its framework needs; the checks and messages both make are in
 * adapter.ts.
 */
import type { Guard } from './guard.js';

/** The request header that carries a key (SPEC S1). Header names are case-insensitive. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header that marks a replayed answer (SPEC S9). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** The response header that tells a client when to retry a 409 (SPEC S10). */
export const RETRY_AFTER_HEADER = 'Retry-After';
/** The input field (and GraphQL argument) that carries a key (SPEC S1). */
export const IDEMPOTENCY_KEY_FIELD = 'idempotencyKey';
/** The scope of every record when an adapter has no `scope` option (SPEC S4). */
export const GLOBAL_SCOPE = 'global';

/**
 * The options both adapters take, in the same words and units: `useIdempotency` (GraphQL)
 * and `idempotency()` (tRPC) each extend them with their framework's own. `TContext` is the
 * server's context type, `TError` the framework's error (`GraphQLError`, `TRPCError`).
 */
export interface AdapterOptions<TContext, Tx, TError> {
  /** The guard from `createGuard({ store })`: it decides, the adapter only translates. */
  guard: Guard<Tx>;
  /**
   * Whose keys these are (SPEC S4): the tenant, account or user, read from the context.
   * Records are unique on (scope, key), so one client's key never replays another's result.
   * Throw (an `UNAUTHORIZED` error of your framework, say) to refuse a request before
   * anything is claimed; nothing is stored then (S13). Returning anything but a string is a
   * setup error (a `TypeError`, a 500), never a store outage.
   * @default one global scope, `GLOBAL_SCOPE`, with one warning when the adapter is created
   */
  scope?: (context: TContext) => string | Promise<string>;
  /**
   * Whether a guarded mutation without a key is refused with 400 `IDEMPOTENCY_KEY_MISSING`
   * (SPEC S3). `false` runs it unguarded instead, with no idempotency context.
   * @default true
   */
  required?: boolean;
  /**
   * Declares an error final, Stripe-style (SPEC S12): the transaction still rolls back, but
   * the answer is stored and replayed to every retry instead of freeing the key. Only for
   * deliberate business errors (a declined card).
   * @default () => false (every error frees the key for a fresh retry)
   */
  isFinalError?: (error: TError) => boolean;
  /**
   * How long, in milliseconds, answers of these mutations are replayed (SPEC S14). Every
   * duration of the package's TypeScript options is in milliseconds.
   * @default the guard's `retention`
   */
  retention?: number;
  /**
   * Reads the request's `Idempotency-Key` header from the context: its raw value, or
   * `null`/`undefined` when absent. Set it for a server whose context the default cannot read.
   * @default readKeyHeader
   */
  keyHeader?: (context: TContext) => string | null | undefined;
}

/**
 * What a guarded mutation finds in its context, at `context.idempotency` (GraphQL) or
 * `ctx.idempotency` (tRPC).
 */
export interface IdempotencyContext<Tx = unknown> {
  /**
   * The store's transaction (for the Drizzle stores, a Drizzle database bound to it). Write
   * through it: those writes and the stored result commit together or not at all (SPEC S8).
   */
  tx: Tx;
  /** The mutation's idempotency key, to pass on (to a payment provider, say). Do not log it. */
  key: string;
  /** A short hash of the key, safe to log (SPEC S26). */
  keyHash: string;
  /** The scope the record belongs to (SPEC S4). */
  scope: string;
}

/** A Fetch `Headers` (anything with `get`), or Node's `IncomingHttpHeaders` (lower-case names). */
type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

/**
 * The default `keyHeader` of both adapters: the `Idempotency-Key` header of the request the
 * context holds, which the common servers put at one of three places:
 *
 * - `context.request`: a Fetch `Request` (GraphQL Yoga, Hono, ...);
 * - `context.req`: a Node `IncomingMessage` (Express, Fastify, tRPC's standalone and
 *   node-http adapters) or a Fetch `Request` (tRPC's fetch adapter);
 * - `context.headers`: the headers themselves (Next.js style contexts).
 *
 * The first place that holds headers is read; `undefined` when it has no such header, or the
 * context holds no request (a server-side caller). Repeated Node headers are joined with
 * `, `, which S2 then refuses as ambiguous.
 */
export function readKeyHeader(context: unknown): string | undefined {
  const ctx = context as {
    request?: { headers?: unknown };
    req?: { headers?: unknown };
    headers?: unknown;
  } | null;
  const headers = isHeadersLike(ctx?.request?.headers)
    ? ctx.request.headers
    : isHeadersLike(ctx?.req?.headers)
      ? ctx.req.headers
      : ctx?.headers;
  return isHeadersLike(headers) ? readHeader(headers, IDEMPOTENCY_KEY_HEADER) : undefined;
}

function readHeader(source: HeadersLike, name: string): string | undefined {
  if (typeof source.get === 'function') {
    return (source as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const value = (source as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isHeadersLike(value: unknown): value is HeadersLike {
  return typeof value === 'object' && value !== null;
}
