/**
 * How the middleware reaches the HTTP request behind a tRPC call. tRPC hands procedures only
 * the app's context, so these read what the common adapters put there when `createContext`
 * passes its options on (`({ req, res, resHeaders, info }) => ({ req, res, resHeaders, info })`).
 */

/** A fetch `Headers`, or node's `IncomingHttpHeaders` (lower-case names). */
export type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

/** Where response headers go. */
export interface ResponseHeadersLike {
  set(name: string, value: string): void;
}

/** The part of tRPC's `TRPCRequestInfo` the batch check reads. */
export interface RequestInfoLike {
  isBatchCall: boolean;
  calls: ReadonlyArray<{ procedure: unknown; path?: string }>;
}

type LooseContext = {
  req?: { headers?: unknown; url?: unknown };
  res?: { setHeader?: unknown; headersSent?: unknown };
  resHeaders?: unknown;
  headers?: unknown;
  info?: unknown;
};

export function defaultRequestHeaders(ctx: object): HeadersLike | undefined {
  const { req, headers } = ctx as LooseContext;
  if (isHeadersLike(req?.headers)) return req.headers;
  if (isHeadersLike(headers)) return headers;
  return undefined;
}

export function defaultResponseHeaders(ctx: object): ResponseHeadersLike | undefined {
  const { resHeaders, res } = ctx as LooseContext;
  if (resHeaders && typeof (resHeaders as Headers).set === 'function') {
    return resHeaders as ResponseHeadersLike;
  }
  if (res && typeof res.setHeader === 'function') {
    const node = res as { setHeader(name: string, value: string): void; headersSent?: boolean };
    // A streamed batch may have sent its headers already; a late header would throw.
    return { set: (name, value) => (node.headersSent ? undefined : node.setHeader(name, value)) };
  }
  return undefined;
}

export function defaultRequestInfo(ctx: object): RequestInfoLike | undefined {
  const { info } = ctx as LooseContext;
  if (info && typeof info === 'object' && Array.isArray((info as RequestInfoLike).calls)) {
    return info as RequestInfoLike;
  }
  return undefined;
}

/** One header's value, or `undefined` when absent. Repeated node headers are joined. */
export function readHeader(source: HeadersLike | undefined, name: string): string | undefined {
  if (!source) return undefined;
  if (typeof source.get === 'function') {
    return (source as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const value = (source as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  // Two Idempotency-Key headers join to "a, b", which S2 then refuses (a space is not allowed).
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * How many calls in this HTTP request a key from its header would be shared by (SPEC S20).
 * With tRPC's request info: the guarded mutations among the batch's calls. Without it: every
 * call of a batch, as read from the URL (`/trpc/a,b?batch=1`), since which of them are
 * guarded cannot be known; refusing a mixed batch is safer than sharing a key.
 */
export function headerKeySharers(
  info: RequestInfoLike | undefined,
  ctx: object,
  isGuarded: (procedure: unknown) => boolean,
): number {
  if (info) {
    if (!info.isBatchCall) return 1;
    return info.calls.filter((call) => isGuarded(call.procedure)).length;
  }
  const url = (ctx as LooseContext).req?.url;
  if (typeof url !== 'string') return 1;
  const parsed = new URL(url, 'http://localhost');
  if (parsed.searchParams.get('batch') !== '1') return 1;
  const last = parsed.pathname.split('/').pop() ?? '';
  return decodeURIComponent(last).split(',').length;
}

function isHeadersLike(value: unknown): value is HeadersLike {
  return typeof value === 'object' && value !== null;
}
