import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { sqlitePayments } from './sqlite.js';
import { codeOf, gql, paymentsServer } from './support.js';

function setup(plugin: Parameters<typeof paymentsServer>[0]['plugin'] = {}) {
  const sqlite = sqlitePayments();
  return { ...sqlite, ...paymentsServer({ ...sqlite, plugin }) };
}

describe('key sources (SPEC S1)', () => {
  const sources = [
    ['the Idempotency-Key header', { query: 'mutation { pay(amount: 5) { id } }', key: 'k' }],
    [
      'an idempotencyKey argument',
      { query: 'mutation { pay(amount: 5, idempotencyKey: "k") { id } }' },
    ],
    [
      'an idempotencyKey argument from a variable',
      {
        query: 'mutation ($k: String) { pay(amount: 5, idempotencyKey: $k) { id } }',
        variables: { k: 'k' },
      },
    ],
    [
      'input.idempotencyKey',
      { query: 'mutation { payWith(input: { amount: 5, idempotencyKey: "k" }) { id } }' },
    ],
    [
      'input.idempotencyKey from an input variable',
      {
        query: 'mutation ($in: PayInput!) { payWith(input: $in) { id } }',
        variables: { in: { amount: 5, idempotencyKey: 'k' } },
      },
    ],
    ['the client directive', { query: 'mutation { pay(amount: 5) @idempotent(key: "k") { id } }' }],
  ] as const;

  for (const [name, request] of sources) {
    it(`S1: ${name} guards the mutation: the retry replays`, async () => {
      const { yoga, harness, records } = setup();
      const first = await gql(yoga, request);
      expect(first.status).toBe(200);
      const retry = await gql(yoga, request);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(Object.values(harness.calls).reduce((a, b) => a + b, 0)).toBe(1);
      expect(records()).toBe(1);
    });
  }

  it('S1: two sources with the same key agree', async () => {
    const { yoga } = setup();
    const response = await gql(yoga, {
      query: 'mutation { pay(amount: 5, idempotencyKey: "k") @idempotent(key: "k") { id } }',
      key: 'k',
    });
    expect(response.status).toBe(200);
  });

  const conflicts = [
    [
      'header and argument',
      { query: 'mutation { pay(amount: 5, idempotencyKey: "a") { id } }', key: 'b' },
    ],
    [
      'header and input',
      { query: 'mutation { payWith(input: { amount: 5, idempotencyKey: "a" }) { id } }', key: 'b' },
    ],
    [
      'argument and directive',
      { query: 'mutation { pay(amount: 5, idempotencyKey: "a") @idempotent(key: "b") { id } }' },
    ],
    [
      'two guarded fields (S18)',
      {
        query:
          'mutation { a: pay(amount: 5, idempotencyKey: "a") { id } b: pay(amount: 6, idempotencyKey: "b") { id } }',
      },
    ],
  ] as const;
  for (const [name, request] of conflicts) {
    it(`S1/S13: disagreeing keys (${name}) answer 400 IDEMPOTENCY_KEY_INVALID, run and store nothing`, async () => {
      const { yoga, harness, records, payments } = setup();
      const response = await gql(yoga, request);
      expect(response.status).toBe(400);
      expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_INVALID');
      expect(response.body.errors?.[0]?.extensions).toMatchObject({
        type: 'urn:mutation-guard:error:key-invalid',
        title: 'Invalid idempotency key',
      });
      expect(response.body.data).toBeUndefined();
      expect(harness.calls).toEqual({});
      expect(records()).toBe(0);
      expect(payments()).toBe(0);
    });
  }

  it('S18: the message for aliased guarded fields whose keys disagree names the aliases', async () => {
    const { yoga } = setup();
    const response = await gql(yoga, {
      query:
        'mutation { first: pay(amount: 5, idempotencyKey: "a") { id } second: pay(amount: 6, idempotencyKey: "b") { id } }',
    });
    expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_INVALID');
    const message = response.body.errors?.[0]?.message ?? '';
    expect(message).toContain('`first: pay`');
    expect(message).toContain('`second: pay`');
  });
});

describe('key syntax and presence (SPEC S2, S3, S13)', () => {
  const malformed = [
    ['a header with a space', { query: 'mutation { pay(amount: 5) { id } }', key: 'a b' }],
    [
      'an over-long argument',
      { query: `mutation { pay(amount: 5, idempotencyKey: "${'x'.repeat(256)}") { id } }` },
    ],
    [
      'an empty directive key',
      { query: 'mutation { pay(amount: 5) @idempotent(key: "") { id } }' },
    ],
  ] as const;
  for (const [name, request] of malformed) {
    it(`S2/S13: ${name} answers 400 IDEMPOTENCY_KEY_INVALID and stores nothing`, async () => {
      const { yoga, harness, records } = setup();
      const response = await gql(yoga, request);
      expect(response.status).toBe(400);
      expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_INVALID');
      expect(harness.calls).toEqual({});
      expect(records()).toBe(0);
    });
  }

  it('S2: a quoted RFC 8941 header is the same key as the bare one', async () => {
    const { yoga, harness } = setup();
    await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }', key: '"k-q"' });
    const retry = await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }', key: 'k-q' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.pay).toBe(1);
  });

  it('S3/S13: a guarded mutation without a key answers 400 IDEMPOTENCY_KEY_MISSING, not run, not stored', async () => {
    const { yoga, harness, records } = setup();
    const response = await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }' });
    expect(response.status).toBe(400);
    expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_MISSING');
    expect(response.body.errors?.[0]?.message).toMatch(/pay/);
    expect(harness.calls).toEqual({});
    expect(records()).toBe(0);
  });

  it('S3/S13: a scope that refuses the caller (401) wins over a missing key, and stores nothing', async () => {
    const { yoga, harness, records } = setup({
      scope: () => {
        throw new GraphQLError('Sign in first.', {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      },
    });
    const response = await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }' });
    expect(response.status).toBe(401);
    expect(codeOf(response)).toBe('UNAUTHENTICATED');
    expect(harness.calls).toEqual({});
    expect(records()).toBe(0);
  });

  it('S3: a field marked required: false runs unguarded without a key, every time', async () => {
    const { yoga, harness, records, payments } = setup();
    await gql(yoga, { query: 'mutation { tip(amount: 1) { id } }' });
    await gql(yoga, { query: 'mutation { tip(amount: 1) { id } }' });
    expect(harness.calls.tip).toBe(2);
    expect(payments()).toBe(2);
    expect(records()).toBe(0);
  });

  it('S3: the plugin option required: false lets keyless mutations run unguarded', async () => {
    const { yoga, harness } = setup({ required: false });
    const response = await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }' });
    expect(response.status).toBe(200);
    expect(harness.calls.pay).toBe(1);
  });

  it('S3: a required field next to an optional one still needs the key', async () => {
    const { yoga, harness } = setup();
    const response = await gql(yoga, {
      query: 'mutation { tip(amount: 1) { id } pay(amount: 5) { id } }',
    });
    expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_MISSING');
    expect(harness.calls).toEqual({});
  });

  it('S13: invalid variables are answered by GraphQL itself and store nothing', async () => {
    const { yoga, records, harness } = setup();
    const response = await gql(yoga, {
      query: 'mutation ($a: Int!) { pay(amount: $a) { id } }',
      variables: { a: 'five' },
      key: 'k-var',
    });
    expect(response.body.errors?.[0]?.message).toMatch(/\$a/);
    expect(harness.calls).toEqual({});
    expect(records()).toBe(0);
  });

  it('S26: error messages carry a hash of the key, never the key', async () => {
    const { yoga } = setup();
    await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }', key: 'secret-key-123' });
    const reused = await gql(yoga, {
      query: 'mutation { pay(amount: 6) { id } }',
      key: 'secret-key-123',
    });
    expect(reused.status).toBe(422);
    expect(reused.text).not.toContain('secret-key-123');
  });
});
