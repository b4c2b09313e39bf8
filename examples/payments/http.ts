/**
 * Routes one node:http server: /graphql to Yoga, /trpc to tRPC's node adapter, GET /health,
 * and the browser page at / (with the client modules it loads, page.ts).
 * Yoga does its own CORS; the tRPC and health routes get theirs here.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AnyTRPCRouter } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { servePage } from './page.js';
import { createContext } from './trpc.js';

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

export function createRequestListener(
  graphql: NodeHandler,
  router: AnyTRPCRouter,
): RequestListener {
  const trpc = createHTTPHandler({ router, createContext, basePath: '/trpc/' });
  return function route(req, res) {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (pathname === '/graphql') {
      void graphql(req, res);
      return;
    }
    if (pathname.startsWith('/trpc/')) {
      if (corsPreflight(req, res)) return;
      trpc(req, res);
      return;
    }
    if (pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      corsHeaders(res);
      json(res, 200, { status: 'ok' });
      return;
    }
    if (servePage(req, res, pathname)) return;
    json(res, 404, { error: `Not found: ${pathname}. Try /, /graphql, /trpc or /health.` });
  };
}

/** Browsers may send the auth and key headers and read the replay and retry headers. */
function corsHeaders(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Idempotent-Replayed, Retry-After');
}

function corsPreflight(req: IncomingMessage, res: ServerResponse): boolean {
  corsHeaders(res);
  if (req.method !== 'OPTIONS') return false;
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    'Content-Type, Authorization, Idempotency-Key, trpc-accept, x-trpc-source',
  );
  res.setHeader('Access-Control-Max-Age', '600');
  res.writeHead(204).end();
  return true;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
