import { describe, expect, it } from 'vitest';
import { sqlitePayments } from './sqlite.js';
import { codeOf, type GqlRequest, gql, paymentsServer } from './support.js';

function setup() {
  const sqlite = sqlitePayments();
  return { ...sqlite, ...paymentsServer(sqlite) };
}

const PAY = 'mutation Pay($amount: Int!) { pay(amount: $amount) { id amount } }';

describe('fingerprints (SPEC S5, S6)', () => {
  const changes: [string, GqlRequest][] = [
    ['changed variables', { query: PAY, variables: { amount: 6 } }],
    [
      'a changed selection set',
      {
        query: 'mutation Pay($amount: Int!) { pay(amount: $amount) { id } }',
        variables: { amount: 5 },
      },
    ],
    [
      'a changed operation name',
      {
        query: 'mutation Other($amount: Int!) { pay(amount: $amount) { id amount } }',
        variables: { amount: 5 },
      },
    ],
    [
      'another mutation',
      {
        query: 'mutation Pay($amount: Int!) { listed(amount: $amount) { id amount } }',
        variables: { amount: 5 },
      },
    ],
    [
      'a changed literal argument',
      {
        query: 'mutation Pay($amount: Int!) { pay(amount: $amount, note: "x") { id amount } }',
        variables: { amount: 5 },
      },
    ],
  ];
  for (const [name, changed] of changes) {
    it(`S6: the same key with ${name} answers 422 IDEMPOTENCY_KEY_REUSED and runs nothing`, async () => {
      const { yoga, harness } = setup();
      const first = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k' });
      expect(first.status).toBe(200);
      const reused = await gql(yoga, { ...changed, key: 'k' });
      expect(reused.status).toBe(422);
      expect(codeOf(reused)).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(harness.calls.listed ?? 0).toBe(0);
      expect(harness.calls.pay).toBe(1);
      // The record is untouched: the original request still replays.
      const retry = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k' });
      expect(retry.text).toBe(first.text);
    });
  }

  it('S5: a retry that differs only in layout replays', async () => {
    const { yoga, harness } = setup();
    await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k' });
    const relaid = await gql(yoga, {
      query: 'mutation Pay( $amount : Int! ) {\n  pay( amount : $amount ) {\n id\n amount } }',
      variables: { amount: 5 },
      key: 'k',
    });
    expect(relaid.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.pay).toBe(1);
  });

  it('S5: the key is not part of the fingerprint: a new key in the input is a new request', async () => {
    const { yoga, harness } = setup();
    const query = 'mutation ($in: PayInput!) { payWith(input: $in) { id } }';
    await gql(yoga, { query, variables: { in: { amount: 5, idempotencyKey: 'k1' } } });
    const again = await gql(yoga, {
      query,
      variables: { in: { amount: 5, idempotencyKey: 'k1' } },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await gql(yoga, {
      query,
      variables: { in: { amount: 5, idempotencyKey: 'k2' } },
    });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(harness.calls.payWith).toBe(2);
  });
});

describe('the operation is the unit (SPEC S18) and the rest passes through (S17)', () => {
  it('S18: aliases and fragments reach the guarded field; one record for the operation', async () => {
    const { yoga, harness, records, payments } = setup();
    const query = /* GraphQL */ `
      mutation Many {
        first: pay(amount: 1) { ...P }
        ... on Mutation { second: pay(amount: 2) { id } }
        ...More
        skipped: pay(amount: 9) @skip(if: true) { id }
      }
      fragment More on Mutation { third: listed(amount: 3) { id } }
      fragment P on Payment { id amount }
    `;
    const first = await gql(yoga, { query, key: 'k-many' });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body.data ?? {})).toEqual(['first', 'second', 'third']);
    const retry = await gql(yoga, { query, key: 'k-many' });
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls).toEqual({ pay: 2, listed: 1 });
    expect(payments()).toBe(3);
    expect(records()).toBe(1);
  });

  it('S18: a guarded field reached only through a fragment spread needs a key', async () => {
    const { yoga, harness } = setup();
    const response = await gql(yoga, {
      query: 'mutation { ...F } fragment F on Mutation { pay(amount: 1) { id } }',
    });
    expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_MISSING');
    expect(harness.calls).toEqual({});
  });

  it('S18: several guarded fields in one operation roll back together when one fails', async () => {
    const { yoga, payments, records } = setup();
    const response = await gql(yoga, {
      query: 'mutation { pay(amount: 1) { id } crash(amount: 2) { id } }',
      key: 'k-both',
    });
    expect(response.body.errors).toHaveLength(1);
    expect(payments()).toBe(0);
    expect(records()).toBe(0);
  });

  it('S17: unguarded mutations and queries ignore the header and run every time', async () => {
    const { yoga, harness, records } = setup();
    for (let i = 0; i < 2; i++) {
      const note = await gql(yoga, { query: 'mutation { note(text: "hi") }', key: 'k-x' });
      expect(note.body).toEqual({ data: { note: 'hi' } });
      expect(note.headers.get('idempotent-replayed')).toBeNull();
      const query = await gql(yoga, { query: '{ payments }', key: 'k-x' });
      expect(query.body).toEqual({ data: { payments: 0 } });
    }
    expect(harness.calls.note).toBe(2);
    expect(records()).toBe(0);
  });

  it('S17: a skipped guarded field leaves the mutation unguarded', async () => {
    const { yoga, harness } = setup();
    const response = await gql(yoga, {
      query: 'mutation ($s: Boolean!) { note(text: "a") pay(amount: 1) @include(if: $s) { id } }',
      variables: { s: false },
    });
    expect(response.body).toEqual({ data: { note: 'a' } });
    expect(harness.calls).toEqual({ note: 1 });
  });
});
