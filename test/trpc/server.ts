/**
 * Real HTTP on loopback: the app served by tRPC's standalone adapter (node's
 * IncomingMessage / ServerResponse), by the fetch adapter behind node's http server, or by
 * tRPC's Fastify plugin (a Fastify request and reply), and a real @trpc/client that records
 * each response's headers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTRPCClient, httpBatchLink, httpLink } from '@trpc/client';
import type { AnyTRPCRouter } from '@trpc/server';
import { type CreateFastifyContextOptions, fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import Fastify from 'fastify';
import superjson from 'superjson';
import type { AppRouter } from './app.js';

export interface Served {
  /** The tRPC endpoint, for `httpLink({ url })` and raw `fetch`. */
  url: string;
  close(): Promise<void>;
}

/** `x-user` picks the caller (the scope); the adapter's options go into the context as-is. */
export async function serve(
  router: AnyTRPCRouter,
  adapter: 'standalone' | 'fetch' | 'fastify' = 'standalone',
  options: { withInfo?: boolean } = {},
): Promise<Served> {
  // Some apps build their context without tRPC's `info`; the middleware must cope.
  const keep = <T>(info: T) => (options.withInfo === false ? undefined : info);
  if (adapter === 'fastify') return serveFastify(router, keep);
  const server =
    adapter === 'standalone'
      ? createHTTPServer({
          router,
          createContext: ({ req, res, info }) => ({
            req,
            res,
            info: keep(info),
            userId: user(req),
          }),
        })
      : createServer(async (req, res) => {
          const response = await fetchRequestHandler({
            endpoint: '/trpc',
            req: await toRequest(req),
            router,
            createContext: ({ req, resHeaders, info }) => ({
              req,
              resHeaders,
              info: keep(info),
              userId: req.headers.get('x-user') ?? 'alice',
            }),
          });
          res.writeHead(response.status, Object.fromEntries(response.headers));
          res.end(Buffer.from(await response.arrayBuffer()));
        });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}${adapter === 'fetch' ? '/trpc' : ''}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface ClientOptions {
  batch?: boolean;
  /** Headers for every request, read at send time so a test can change them. */
  headers?: () => Record<string, string>;
}

/** A typed client plus the headers of every response it received, in order. */
export function connect(url: string, options: ClientOptions = {}) {
  const responses: Headers[] = [];
  const link = (options.batch ? httpBatchLink : httpLink)({
    url,
    transformer: superjson,
    headers: () => options.headers?.() ?? {},
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      responses.push(response.headers);
      return response;
    },
  });
  return { trpc: createTRPCClient<AppRouter>({ links: [link] }), responses };
}

/** A raw POST of one call, superjson-encoded, to look at status and headers. */
export function rawMutation(
  url: string,
  path: string,
  input: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(superjson.serialize(input)),
  });
}

/** The context gets Fastify's own request and reply, as tRPC's Fastify docs write it. */
async function serveFastify(
  router: AnyTRPCRouter,
  keep: <T>(info: T) => T | undefined,
): Promise<Served> {
  const app = Fastify();
  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router,
      createContext: ({ req, res, info }: CreateFastifyContextOptions) => ({
        req,
        res,
        info: keep(info),
        userId: user(req.raw),
      }),
    },
  });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${origin}/trpc`, close: () => app.close() };
}

function user(req: IncomingMessage): string {
  const value = req.headers['x-user'];
  return typeof value === 'string' ? value : 'alice';
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of [value ?? []].flat()) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://127.0.0.1${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
