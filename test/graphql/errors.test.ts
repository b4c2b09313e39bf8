/**
 * What a client learns from a refused guarded mutation (SPEC S10, S19, S21): the details in
 * `extensions`, the HTTP status, and a `Retry-After` header a browser can read. A guard stub
 * fails with known values, so that nothing here depends on how the guard computes them.
 */
import { describe, expect, it } from 'vitest';
import { type Guard, IdempotencyError } from '../../src/index.js';
import { sqlitePayments } from './sqlite.js';
import { codeOf, gql, paymentsServer } from './support.js';

const PAY = 'mutation { pay(amount: 5) { id } }';

/** A guard that answers every call with `error`, as a busy or failing store would. */
function failingGuard(error: IdempotencyError): Guard<unknown> {
  return {
    run: () => Promise.reject(error),
    purge: () => Promise.resolve(0),
    options: {} as Guard<unknown>['options'],
  };
}

function setup(guard: Guard<unknown>) {
  const sqlite = sqlitePayments();
  return { ...sqlite, ...paymentsServer<unknown>({ ...sqlite, replaceGuard: guard }) };
}

const inUse = () =>
  new IdempotencyError('IDEMPOTENCY_KEY_IN_USE', 'Idempotency key abc123 is in use.', {
    keyHash: 'abc123',
    retryAfterSeconds: 7,
  });

describe('error details (SPEC S10, S19)', () => {
  it("S10/S19: Retry-After and extensions.retryAfterSeconds are exactly the guard's retryAfterSeconds", async () => {
    const { yoga, harness } = setup(failingGuard(inUse()));
    const response = await gql(yoga, { query: PAY, key: 'k-busy' });
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.body.errors?.[0]?.extensions).toEqual({
      code: 'IDEMPOTENCY_KEY_IN_USE',
      type: 'urn:mutation-guard:error:key-in-use',
      title: 'Idempotency key in use',
      status: 409,
      keyHash: 'abc123',
      retryAfterSeconds: 7,
    });
    expect(harness.calls).toEqual({});
  });

  it('S19: every error carries its HTTP status in extensions, and no retryAfterSeconds where none is set', async () => {
    const { yoga } = setup(
      failingGuard(new IdempotencyError('IDEMPOTENCY_KEY_REUSED', 'reused', { keyHash: 'def456' })),
    );
    const response = await gql(yoga, { query: PAY, key: 'k-reused' });
    expect(response.status).toBe(422);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.body.errors?.[0]?.extensions).toEqual({
      code: 'IDEMPOTENCY_KEY_REUSED',
      type: 'urn:mutation-guard:error:key-reused',
      title: 'Idempotency key reused',
      status: 422,
      keyHash: 'def456',
    });
  });

  it('S19: errors raised before the guard (a missing key) carry their status too', async () => {
    const sqlite = sqlitePayments();
    const { yoga } = paymentsServer(sqlite);
    const response = await gql(yoga, { query: PAY });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions).toMatchObject({
      code: 'IDEMPOTENCY_KEY_MISSING',
      status: 400,
    });
  });
});

describe('CORS (SPEC S21)', () => {
  it("S21: a cross-origin 409 through Yoga's default CORS exposes Retry-After and Idempotent-Replayed", async () => {
    const { yoga } = setup(failingGuard(inUse()));
    const response = await gql(yoga, {
      query: PAY,
      key: 'k-cors-busy',
      headers: { origin: 'https://app.example' },
    });
    expect(response.status).toBe(409);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = (response.headers.get('access-control-expose-headers') ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['retry-after', 'idempotent-replayed']));
    expect(response.headers.get('retry-after')).toBe('7');
  });
});

describe('setup mistakes are not outages', () => {
  it.each([
    ['undefined', undefined],
    ['a number', 42],
    ['null', null],
  ])(
    'a scope option returning %s is a setup error naming the option, not 503 STORE_UNAVAILABLE; nothing runs (S4, S15)',
    async (_, value) => {
      const sqlite = sqlitePayments();
      const errors: unknown[] = [];
      const { yoga, harness } = paymentsServer({
        ...sqlite,
        plugin: { scope: () => value as unknown as string },
        yoga: {
          logging: {
            debug: () => {},
            info: () => {},
            warn: () => {},
            error: (...args: unknown[]) => errors.push(...args),
          },
        },
      });
      const response = await gql(yoga, { query: PAY, key: 'k-scope' });
      expect(response.status).toBe(500);
      expect(codeOf(response)).not.toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      expect(String(errors.map((e) => (e as Error)?.message ?? e))).toMatch(
        /`scope` option must return a string/,
      );
      expect(harness.calls).toEqual({});
      expect(sqlite.records()).toBe(0);
    },
  );
});
