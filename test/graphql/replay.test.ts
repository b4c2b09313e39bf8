import { describe, expect, it } from 'vitest';
import { sqlitePayments } from './sqlite.js';
import { deferred, gql, paymentsServer } from './support.js';

function setup(plugin: Parameters<typeof paymentsServer>[0]['plugin'] = {}) {
  const sqlite = sqlitePayments();
  return { ...sqlite, ...paymentsServer({ ...sqlite, plugin }) };
}

const PAY = /* GraphQL */ `
  mutation Pay($amount: Int!) {
    pay(amount: $amount) { id amount }
  }
`;

describe('replays (SPEC S9)', () => {
  it('S9: a retry gets the first data exactly, with Idempotent-Replayed, and the resolver runs once', async () => {
    const { yoga, harness, payments } = setup();
    const first = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-1' });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ pay: { id: 1, amount: 5 } });
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const retry = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-1' });
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.pay).toBe(1);
    expect(payments()).toBe(1);
  });

  it('S9/S12: a kept final error is replayed with the first data, errors and HTTP status', async () => {
    const { yoga, harness, payments, records } = setup({
      isFinalError: (error) => error.extensions.code === 'CARD_DECLINED',
    });
    const query = 'mutation { charge(amount: 500) { id } }';
    const first = await gql(yoga, { query, key: 'k-decline' });
    expect(first.status).toBe(402);
    expect(first.body.errors?.[0]?.message).toBe('Card declined');
    expect(first.body.data).toEqual({ charge: null });

    const retry = await gql(yoga, { query, key: 'k-decline' });
    expect(retry.status).toBe(first.status);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.charge).toBe(1);
    // S12: the transaction rolled back even though the answer is kept.
    expect(payments()).toBe(0);
    expect(records()).toBe(1);
  });

  it('S9: a replayed final error keeps its status but never the first response headers (Set-Cookie)', async () => {
    const { yoga, db } = setup({
      isFinalError: (error) => error.extensions.code === 'CARD_DECLINED',
    });
    const query = 'mutation { charge(amount: 500) { id } }';
    const first = await gql(yoga, { query, key: 'k-cookie' });
    expect(first.status).toBe(402);
    expect(first.headers.get('set-cookie')).toBe('sid=alice-secret-session');

    const retry = await gql(yoga, { query, key: 'k-cookie' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.status).toBe(402);
    expect(retry.headers.get('set-cookie')).toBeNull();
    expect(retry.text).toBe(first.text);
    // Nor is it kept in the store, where it would outlive the request.
    const stored = db.$client.prepare('select result from idempotency_records').get() as {
      result: string;
    };
    expect(stored.result).not.toContain('alice-secret-session');

    // A record stored with headers (before this rule) replays without them too.
    const withCookie = stored.result.replace(
      '"http":{"status":402}',
      '"http":{"status":402,"headers":{"set-cookie":"sid=alice-secret-session"}}',
    );
    expect(withCookie).not.toBe(stored.result);
    db.$client.prepare('update idempotency_records set result = ?').run(withCookie);
    const old = await gql(yoga, { query, key: 'k-cookie' });
    expect(old.status).toBe(402);
    expect(old.headers.get('set-cookie')).toBeNull();
  });

  it('S12: an answer with one final and one non-final error is not kept: the key is freed and a retry runs', async () => {
    const { yoga, harness, records, payments } = setup({
      isFinalError: (error) => error.extensions.code === 'CARD_DECLINED',
    });
    const query = 'mutation { charge(amount: 500) { id } reject(amount: 1) { id } }';
    const first = await gql(yoga, { query, key: 'k-mixed' });
    expect(first.body.errors?.map((e) => e.extensions?.code)).toEqual([
      'CARD_DECLINED',
      'TRY_LATER',
    ]);
    expect(records()).toBe(0);
    const retry = await gql(yoga, { query, key: 'k-mixed' });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(harness.calls).toEqual({ charge: 2, reject: 2 });
    expect(payments()).toBe(0);
  });

  it('S9: replayedExtension puts extensions.idempotency.replayed in the body', async () => {
    const { yoga } = setup({ replayedExtension: true });
    const first = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-ext' });
    expect(first.body.extensions).toEqual({ idempotency: { replayed: false } });
    const retry = await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-ext' });
    expect(retry.body.extensions).toEqual({ idempotency: { replayed: true } });
    expect(retry.body.data).toEqual(first.body.data);
  });
});

describe('failures (SPEC S12)', () => {
  it('S12: a resolver that throws rolls back its rows, frees the key, and a retry runs afresh', async () => {
    const { yoga, harness, payments, records } = setup();
    const query = 'mutation { crash(amount: 7) { id } }';
    const first = await gql(yoga, { query, key: 'k-crash' });
    expect(first.body.errors).toHaveLength(1);
    expect(payments()).toBe(0);
    expect(records()).toBe(0);

    const retry = await gql(yoga, { query, key: 'k-crash' });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(harness.calls.crash).toBe(2);
    expect(payments()).toBe(0);
  });

  it('S12: an expected GraphQLError that is not declared final also frees the key', async () => {
    const { yoga, harness, payments, records } = setup();
    const query = 'mutation { reject(amount: 7) { id } }';
    const first = await gql(yoga, { query, key: 'k-reject' });
    expect(first.body.errors?.[0]?.message).toBe('Try again later');
    await gql(yoga, { query, key: 'k-reject' });
    expect(harness.calls.reject).toBe(2);
    expect(payments()).toBe(0);
    expect(records()).toBe(0);
  });

  it('S12: with Yoga masking on, an unexpected error is masked and never stored, even if declared final', async () => {
    const { yoga, harness, records } = setup({ isFinalError: () => true });
    const query = 'mutation { crash(amount: 7) { id } }';
    for (let i = 0; i < 2; i++) {
      const response = await gql(yoga, { query, key: 'k-secret' });
      expect(response.text).not.toContain('hunter2');
      expect(response.body.errors?.[0]?.message).toBe('Unexpected error.');
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(harness.calls.crash).toBe(2);
    expect(records()).toBe(0);
  });

  it('S12: a failed guarded mutation leaves no rows next to a committed one in the same run', async () => {
    const { yoga, payments } = setup();
    await gql(yoga, { query: PAY, variables: { amount: 1 }, key: 'k-ok' });
    await gql(yoga, { query: 'mutation { crash(amount: 2) { id } }', key: 'k-bad' });
    expect(payments()).toBe(1);
  });
});

describe('scopes (SPEC S4)', () => {
  it('S4: the same key in two scopes runs twice and never replays the other scope', async () => {
    const { yoga, harness } = setup();
    const a = await gql(yoga, {
      query: PAY,
      variables: { amount: 5 },
      key: 'shared',
      headers: { 'x-account': 'a' },
    });
    const b = await gql(yoga, {
      query: PAY,
      variables: { amount: 5 },
      key: 'shared',
      headers: { 'x-account': 'b' },
    });
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.data).not.toEqual(a.body.data);
    expect(harness.calls.pay).toBe(2);
  });

  it('S4: without a scope option the plugin warns once, at creation', async () => {
    const { vi } = await import('vitest');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const { yoga } = setup({ scope: undefined });
      await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-g1' });
      await gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-g2' });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/scope/);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('in flight (SPEC S10)', () => {
  it('S10: on SQLite a duplicate that arrives while the first runs gets 409 at once; a retry after it replays', async () => {
    const { yoga, harness, records } = setup();
    const gate = deferred();
    harness.gate.wait = gate.promise;
    const first = gql(yoga, { query: PAY, variables: { amount: 3 }, key: 'k-busy' });
    await new Promise((r) => setTimeout(r, 50));
    const busy = await gql(yoga, { query: PAY, variables: { amount: 3 }, key: 'k-busy' });
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).not.toBeNull();
    gate.resolve();
    const a = await first;
    const b = await gql(yoga, { query: PAY, variables: { amount: 3 }, key: 'k-busy' });
    expect(b.text).toBe(a.text);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(harness.calls.pay).toBe(1);
    expect(records()).toBe(1);
  });
});
