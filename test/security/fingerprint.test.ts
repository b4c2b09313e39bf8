/**
 * SPEC S5, S6 through the public API: inputs whose state is not in their own enumerable
 * properties (URL) must not share a fingerprint, and a hostile input (shared objects, deep
 * nesting, sheer size) is answered quickly with 413 before anything is claimed.
 */
import { initTRPC } from '@trpc/server';
import { createSchema, createYoga } from 'graphql-yoga';
import superjson from 'superjson';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idempotentDirectiveTypeDefs, useIdempotency } from '../../src/graphql/index.js';
import { createGuard, type GuardEvent, type GuardOptions } from '../../src/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { idempotency, idempotencyErrorFormatter } from '../../src/trpc/index.js';
import { rawMutation, type Served, serve } from '../trpc/server.js';

function sqliteGuard(options: Omit<GuardOptions<SqliteDatabase>, 'store'> = {}) {
  const events: GuardEvent[] = [];
  const guard = createGuard({
    store: sqliteStore(openSqlite(':memory:')),
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { guard, events };
}

/** A tRPC app with superjson (or none), whose procedures count their runs. */
function trpcApp(
  transformer: 'superjson' | 'none',
  options: Parameters<typeof sqliteGuard>[0] = {},
) {
  const { guard, events } = sqliteGuard(
    transformer === 'superjson' ? { serializer: superjson, ...options } : options,
  );
  const t = initTRPC.create({
    ...(transformer === 'superjson' ? { transformer: superjson } : {}),
    errorFormatter: idempotencyErrorFormatter,
  });
  const guarded = idempotency({ guard, scope: () => 'acct_1' });
  const runs = { visit: 0, visitText: 0, anything: 0 };
  const router = t.router({
    visit: t.procedure
      .input(z.object({ url: z.instanceof(URL) }))
      .concat(guarded)
      .mutation(({ input }) => ({ run: ++runs.visit, href: input.url.href })),
    visitText: t.procedure
      .input(
        z.object({
          url: z
            .string()
            .url()
            .transform((text) => new URL(text)),
        }),
      )
      .concat(guarded)
      .mutation(({ input }) => ({ run: ++runs.visitText, href: input.url.href })),
    anything: t.procedure
      .input(z.object({ data: z.unknown() }))
      .concat(guarded)
      .mutation(() => ({ run: ++runs.anything })),
  });
  return { router, runs, events };
}

const servers: Served[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

async function served(app: ReturnType<typeof trpcApp>) {
  const server = await serve(app.router);
  servers.push(server);
  return server;
}

/** A POST without a transformer: the input as plain JSON. */
function plainMutation(url: string, path: string, input: unknown, key: string) {
  return fetch(`${url}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(input),
  });
}

type ErrorShape = { data?: { idempotencyCode?: unknown } };

/** The SPEC code of a tRPC error response, superjson-encoded (`error.json`) or not. */
async function codeOf(response: Response): Promise<unknown> {
  const body = (await response.json()) as { error?: ErrorShape & { json?: ErrorShape } };
  return (body.error?.json ?? body.error)?.data?.idempotencyCode;
}

describe('S5, S6: a URL in the input is fingerprinted by its content', () => {
  it('S6: tRPC + superjson + z.instanceof(URL): same key, another URL answers 422 and does not replay', async () => {
    const app = trpcApp('superjson');
    const { url } = await served(app);
    const key = { 'idempotency-key': 'url-key-1' };
    const first = await rawMutation(url, 'visit', { url: new URL('https://a.example/pay') }, key);
    expect(first.status).toBe(200);
    const other = await rawMutation(url, 'visit', { url: new URL('https://b.example/pay') }, key);
    expect(other.status).toBe(422);
    expect(await codeOf(other)).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    const retry = await rawMutation(url, 'visit', { url: new URL('https://a.example/pay') }, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(app.runs.visit).toBe(1);
  });

  it('S6: plain tRPC with z.string().url().transform(s => new URL(s)): another URL answers 422', async () => {
    const app = trpcApp('none');
    const { url } = await served(app);
    const first = await plainMutation(url, 'visitText', { url: 'https://a.example/' }, 'k-2');
    expect(first.status).toBe(200);
    const other = await plainMutation(url, 'visitText', { url: 'https://b.example/' }, 'k-2');
    expect(other.status).toBe(422);
    expect(await codeOf(other)).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(app.runs.visitText).toBe(1);
  });

  it('S6: a GraphQL URL scalar parsing to new URL(): another URL answers 422 and does not replay', async () => {
    const { guard } = sqliteGuard();
    let runs = 0;
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: /* GraphQL */ `
          ${idempotentDirectiveTypeDefs}
          scalar URL
          type Query { ok: Boolean }
          type Mutation { visit(url: URL!): String! @idempotent }
        `,
        resolvers: {
          URL: new (await import('graphql')).GraphQLScalarType({
            name: 'URL',
            parseValue: (value) => new URL(String(value)),
            serialize: (value) => String(value),
          }),
          Mutation: { visit: (_: unknown, { url }: { url: URL }) => `${++runs}:${url.href}` },
        },
      }),
      plugins: [useIdempotency({ guard, scope: () => 'acct_1' })],
      logging: false,
    });
    const send = (href: string) =>
      yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'gql-url-key' },
        body: JSON.stringify({
          query: 'mutation Visit($url: URL!) { visit(url: $url) }',
          variables: { url: href },
        }),
      });
    const first = await send('https://a.example/');
    expect(first.status).toBe(200);
    const other = await send('https://b.example/');
    expect(other.status).toBe(422);
    const body = (await other.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(runs).toBe(1);
  });
});

/** superjson's wire format for a chain in which each link is reached on two paths. */
function sharedChain(depth: number) {
  let node: unknown = { leaf: 1 };
  for (let i = 0; i < depth; i++) node = { l: node, r: null };
  const referentialEqualities: Record<string, string[]> = {};
  let path = 'data';
  for (let i = 0; i < depth; i++) {
    referentialEqualities[`${path}.l`] = [`${path}.r`];
    path += '.l';
  }
  return { json: { data: node }, meta: { referentialEqualities } };
}

function superjsonBody(url: string, payload: unknown, key: string) {
  return fetch(`${url}/anything`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(payload),
  });
}

describe('Limits: hostile inputs are answered before any claim', () => {
  it('a superjson input sharing one object on 2^60 paths (9 KB) is fingerprinted and replayed', async () => {
    // Encoded once per path, this input would take longer than the age of the universe.
    const app = trpcApp('superjson');
    const { url } = await served(app);
    const body = sharedChain(60);
    expect(JSON.stringify(body).length).toBeLessThan(10_000);
    const first = await superjsonBody(url, body, 'shared-chain');
    expect(first.status).toBe(200);
    const retry = await superjsonBody(url, body, 'shared-chain');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(app.runs.anything).toBe(1);
  });

  it('a tRPC input nested 3,000 levels answers 413 IDEMPOTENCY_INPUT_TOO_LARGE, not 500, and claims nothing', async () => {
    const app = trpcApp('none');
    const { url } = await served(app);
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = { d: deep };
    const response = await plainMutation(url, 'anything', { data: deep }, 'deep-key');
    expect(response.status).toBe(413);
    expect(await codeOf(response)).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(app.runs.anything).toBe(0);
    expect(app.events.map((event) => event.type)).toEqual([]);
  });

  it('an input over maxInputBytes answers 413 before any claim', async () => {
    const app = trpcApp('none', { maxInputBytes: 4096 });
    const { url } = await served(app);
    const big = await plainMutation(url, 'anything', { data: 'x'.repeat(5000) }, 'big-key');
    expect(big.status).toBe(413);
    expect(await codeOf(big)).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    const small = await plainMutation(url, 'anything', { data: 'x'.repeat(100) }, 'big-key');
    expect(small.status).toBe(200);
    expect(app.runs.anything).toBe(1);
  });

  it('GraphQL: a JSON-scalar input nested 3,000 levels, or over maxInputBytes, answers 413 IDEMPOTENCY_INPUT_TOO_LARGE before any claim', async () => {
    const { guard, events } = sqliteGuard({ maxInputBytes: 4096 });
    let runs = 0;
    const { GraphQLScalarType } = await import('graphql');
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: /* GraphQL */ `
          ${idempotentDirectiveTypeDefs}
          scalar JSON
          type Query { ok: Boolean }
          type Mutation { keep(data: JSON!): Int! @idempotent }
        `,
        resolvers: {
          JSON: new GraphQLScalarType({ name: 'JSON', parseValue: (value) => value }),
          Mutation: { keep: () => ++runs },
        },
      }),
      plugins: [useIdempotency({ guard, scope: () => 'acct_1' })],
      logging: false,
    });
    const send = (data: unknown, key: string) =>
      yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({
          query: 'mutation Keep($data: JSON!) { keep(data: $data) }',
          variables: { data },
        }),
      });
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = { d: deep };
    for (const response of [
      await send(deep, 'gql-deep'),
      await send('x'.repeat(5000), 'gql-big'),
    ]) {
      expect(response.status).toBe(413);
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    }
    expect(runs).toBe(0);
    expect(events).toEqual([]);
    expect((await send('small', 'gql-big')).status).toBe(200);
    expect(runs).toBe(1);
  });
});
