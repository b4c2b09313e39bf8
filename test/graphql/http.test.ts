import { envelop, useEngine, useSchema } from '@envelop/core';
import {
  execute,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
  specifiedDirectives,
  specifiedRules,
  validate,
} from 'graphql';
import { batchRequests } from 'graphql-request';
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { idempotentDirective, useIdempotency } from '../../src/graphql/index.js';
import { createGuard, type IdempotencyStore } from '../../src/index.js';
import { listen } from './server.js';
import { sqlitePayments } from './sqlite.js';
import { codeOf, gql, paymentsServer } from './support.js';

function setup(yoga: Parameters<typeof paymentsServer>[0]['yoga'] = {}) {
  const sqlite = sqlitePayments();
  return { ...sqlite, ...paymentsServer({ ...sqlite, yoga }) };
}

async function batch(yoga: { fetch: typeof fetch }, operations: object[], key?: string) {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(operations),
  });
  return { status: response.status, body: await response.json() };
}

describe('batches (SPEC S20)', () => {
  it('S20: one header key for two guarded mutations in a batch: 400 for the request, nothing runs', async () => {
    const { yoga, harness, records } = setup({ batching: true });
    const response = await batch(
      yoga as never,
      [
        { query: 'mutation { pay(amount: 1) { id } }' },
        { query: 'mutation { listed(amount: 2) { id } }' },
      ],
      'k-batch',
    );
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(harness.calls).toEqual({});
    expect(records()).toBe(0);
  });

  it('S20: keys inside each operation work in a batch, and a header key with one guarded mutation is fine', async () => {
    const { yoga, harness, records } = setup({ batching: true });
    const own = await batch(yoga as never, [
      { query: 'mutation { pay(amount: 1, idempotencyKey: "b1") { id } }' },
      { query: 'mutation { payWith(input: { amount: 2, idempotencyKey: "b2" }) { id } }' },
    ]);
    expect(own.status).toBe(200);
    expect(own.body).toHaveLength(2);
    const shared = await batch(
      yoga as never,
      [
        { query: 'mutation { pay(amount: 3) { id } }' },
        { query: '{ payments }' },
        { query: 'mutation { note(text: "x") }' },
      ],
      'b3',
    );
    expect(shared.status).toBe(200);
    expect(shared.body[0].data.pay.id).toBe(3);
    expect(harness.calls).toEqual({ pay: 2, payWith: 1, note: 1 });
    expect(records()).toBe(3);
  });

  it('S20: over HTTP with graphql-request batchRequests', async () => {
    const { yoga, harness } = setup({ batching: true });
    const server = await listen(yoga);
    try {
      const error = await batchRequests(
        server.url,
        [
          { document: 'mutation { pay(amount: 1) { id } }' },
          { document: 'mutation { pay(amount: 2) { id } }' },
        ],
        { 'Idempotency-Key': 'k-http-batch' },
      ).catch(
        (e: { response: { status: number; errors?: { extensions: { code: string } }[] } }) => e,
      );
      expect((error as { response: { status: number } }).response.status).toBe(400);
      expect(harness.calls).toEqual({});
    } finally {
      await server.close();
    }
  });
});

describe('CORS (SPEC S21)', () => {
  it("S21: with Yoga's default CORS a preflight accepts Idempotency-Key and replays expose Idempotent-Replayed", async () => {
    const { yoga } = setup();
    const preflight = await yoga.fetch('http://yoga/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    });
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
      'idempotency-key',
    );
    const response = await gql(yoga, {
      query: 'mutation { pay(amount: 1) { id } }',
      key: 'k-cors',
      headers: { origin: 'https://app.example' },
    });
    expect(response.headers.get('access-control-expose-headers')).toContain('Idempotent-Replayed');
  });

  it('S21: a configured CORS header list is extended, not replaced', async () => {
    const { yoga } = setup({
      cors: {
        origin: 'https://app.example',
        allowedHeaders: ['content-type'],
        exposedHeaders: ['x-trace'],
      },
    });
    const preflight = await yoga.fetch('http://yoga/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    });
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'content-type, Idempotency-Key',
    );
    const response = await gql(yoga, {
      query: '{ payments }',
      headers: { origin: 'https://app.example' },
    });
    expect(response.headers.get('access-control-expose-headers')).toBe(
      'x-trace, Idempotent-Replayed, Retry-After',
    );
  });

  it('S21: with CORS off nothing is added', async () => {
    const { yoga } = setup({ cors: false });
    const response = await gql(yoga, {
      query: '{ payments }',
      headers: { origin: 'https://app.example' },
    });
    expect(response.headers.get('access-control-expose-headers')).toBeNull();
  });
});

describe('error mapping (SPEC S15, S19)', () => {
  it('S15/S19: a failing store answers 503 IDEMPOTENCY_STORE_UNAVAILABLE and runs nothing', async () => {
    const sqlite = sqlitePayments();
    const broken: IdempotencyStore<unknown> = {
      ...sqlite.store,
      dialect: 'broken',
      claim: () => Promise.reject(new Error('connection refused')),
      claimAndRun: () => Promise.reject(new Error('connection refused')),
    } as IdempotencyStore<unknown>;
    const { yoga, harness } = paymentsServer({ ...sqlite, store: broken });
    const response = await gql(yoga, { query: 'mutation { pay(amount: 1) { id } }', key: 'k-503' });
    expect(response.status).toBe(503);
    expect(codeOf(response)).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(response.body.errors?.[0]?.extensions).toMatchObject({
      title: 'Idempotency store unavailable',
      type: 'urn:mutation-guard:error:store-unavailable',
    });
    expect(response.text).not.toContain('connection refused');
    expect(harness.calls).toEqual({});
  });
});

describe('code-first schemas and plain Envelop (SPEC S18)', () => {
  function codeFirst(calls: { n: number }) {
    const Mutation = new GraphQLObjectType({
      name: 'Mutation',
      fields: {
        send: {
          type: GraphQLInt,
          args: { text: { type: GraphQLString } },
          extensions: { idempotent: { retention: 60_000 } },
          resolve: () => ++calls.n,
        },
        plain: { type: GraphQLInt, resolve: () => ++calls.n },
      },
    });
    const Query = new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } });
    return new GraphQLSchema({
      query: Query,
      mutation: Mutation,
      directives: [...specifiedDirectives, idempotentDirective],
    });
  }

  it('S18: a field marked with extensions.idempotent is guarded in Yoga, with the client directive', async () => {
    const calls = { n: 0 };
    const guard = createGuard({ store: sqlitePayments().store });
    const yoga = createYoga({
      schema: codeFirst(calls),
      plugins: [useIdempotency({ guard, scope: () => 's' })],
      logging: false,
    });
    const query = 'mutation { send(text: "hi") @idempotent(key: "cf-1") }';
    const first = await gql(yoga, { query });
    const retry = await gql(yoga, { query });
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(codeOf(await gql(yoga, { query: 'mutation { send(text: "hi") }' }))).toBe(
      'IDEMPOTENCY_KEY_MISSING',
    );
    await gql(yoga, { query: 'mutation { plain }' });
    expect(calls.n).toBe(2);
  });

  it('S18: the plugin works in plain Envelop, the key read through the keyHeader option', async () => {
    const calls = { n: 0 };
    const guard = createGuard({ store: sqlitePayments().store });
    const getEnveloped = envelop({
      plugins: [
        useEngine({ parse, validate, execute, specifiedRules }),
        useSchema(codeFirst(calls)),
        useIdempotency<unknown, { key?: string }>({
          guard,
          scope: () => 's',
          keyHeader: (context) => context.key,
          replayedExtension: true,
        }),
      ],
    });
    const run = async (key: string | undefined) => {
      const { parse: p, execute: e, contextFactory, schema } = getEnveloped({ key });
      return e({
        schema,
        document: p('mutation { send(text: "x") }'),
        contextValue: await contextFactory(),
      });
    };
    const first = await run('env-1');
    const retry = await run('env-1');
    expect(first).toEqual({ data: { send: 1 }, extensions: { idempotency: { replayed: false } } });
    expect(retry).toEqual({ data: { send: 1 }, extensions: { idempotency: { replayed: true } } });
    const missing = await run(undefined);
    expect(missing.errors[0].extensions).toMatchObject({
      code: 'IDEMPOTENCY_KEY_MISSING',
      http: { status: 400 },
    });
    expect(calls.n).toBe(1);
  });

  it('S18: option fields naming a missing mutation fails at start-up', () => {
    const guard = createGuard({ store: sqlitePayments().store });
    expect(() =>
      createYoga({
        schema: codeFirst({ n: 0 }),
        plugins: [useIdempotency({ guard, scope: () => 's', fields: ['nope'] })],
      }),
    ).toThrow(/nope/);
  });
});
