/**
 * How the middleware reaches the HTTP request behind a tRPC call. tRPC hands procedures only
 * the app's context, so these read what the common adapters put there when `createContext`
 * passes its options on (`({ req, res, resHeaders, info }) => ({ req, res, resHeaders, info })`),
 * whichever adapter it is: fetch, standalone / node-http, Express or Fastify. The key header
 * is read as on GraphQL, by the core's `readKeyHeader`.
 */

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
  req?: { url?: unknown };
  res?: { setHeader?: unknown; headersSent?: unknown; raw?: unknown };
  resHeaders?: unknown;
  info?: unknown;
};

/**
 * The default `responseHeaders`: the fetch adapter's `ctx.resHeaders`, else a Node response
 * at `ctx.res` (standalone, node-http, Express) or `ctx.res.raw` (a Fastify reply).
 */
export function readResponseHeaders(ctx: object): ResponseHeadersLike | undefined {
  const { resHeaders, res } = ctx as LooseContext;
  if (resHeaders && typeof (resHeaders as Headers).set === 'function') {
    return resHeaders as ResponseHeadersLike;
  }
  const node = nodeResponse(res) ?? nodeResponse(res?.raw);
  if (node) {
    // A streamed batch may have sent its headers already; a late header would throw.
    return { set: (name, value) => (node.headersSent ? undefined : node.setHeader(name, value)) };
  }
  return undefined;
}

type NodeResponseLike = { setHeader(name: string, value: string): void; headersSent?: boolean };

/**
 * A node `ServerResponse` (standalone, node-http, Express). A Fastify reply is not one, but
 * its `.raw` is: headers set there go out with the reply Fastify sends, and its
 * `headersSent` tells when that has already happened.
 */
function nodeResponse(value: unknown): NodeResponseLike | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return typeof (value as NodeResponseLike).setHeader === 'function'
    ? (value as NodeResponseLike)
    : undefined;
}

/** The default `requestInfo`: tRPC's request info at `ctx.info`, if the context passed it on. */
export function readRequestInfo(ctx: object): RequestInfoLike | undefined {
  const { info } = ctx as LooseContext;
  if (info && typeof info === 'object' && Array.isArray((info as RequestInfoLike).calls)) {
    return info as RequestInfoLike;
  }
  return undefined;
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
