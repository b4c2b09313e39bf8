import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, fingerprint, type IdempotencyStore } from '../../src/index.js';
import { deferred } from '../support/deferred.js';
import { createApp } from './app.js';
import { rawMutation, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const sqlite = sqliteGuard();
const app = createApp(sqlite.guard, sqlite.ledger);
let served: Served;
beforeAll(async () => {
  served = await serve(app.router);
});
afterAll(() => served.close());

interface ErrorBody {
  error: { json: { message: string; data: Record<string, unknown> } };
}

async function call(path: string, input: unknown, key: string, url = served.url) {
  const response = await rawMutation(url, path, input, { 'Idempotency-Key': key });
  return { response, body: (await response.json()) as ErrorBody };
}

describe('failed procedures (SPEC S12)', () => {
  it.each([
    ['throws an Error', 'throw', 500],
    ['throws a TRPCError (next() resolves ok: false)', 'trpc', 412],
    ['fails its .output() validator (ok: false, nothing thrown)', 'output', 500],
  ] as const)(
    'S12: a procedure that %s rolls back its rows and frees the key; a retry runs',
    async (_, mode, status) => {
      const key = `k-fail-${mode}`;
      const rows = await sqlite.ledger.count();
      const runs = app.runs.failing;
      const first = await call('failing', { amount: 1, mode }, key);
      expect(first.response.status).toBe(status);
      expect(await sqlite.ledger.count()).toBe(rows);
      expect(await sqlite.store.read({ scope: 'alice', key })).toBeUndefined();

      const retry = await call('failing', { amount: 1, mode }, key);
      expect(retry.response.status).toBe(status);
      expect(retry.response.headers.get('idempotent-replayed')).toBeNull();
      expect(app.runs.failing).toBe(runs + 2);
      expect(await sqlite.ledger.count()).toBe(rows);
    },
  );

  it('S12: a declared final error (isFinalError) rolls back, is stored, and is replayed', async () => {
    const key = 'k-declined';
    const rows = await sqlite.ledger.count();
    const runs = app.runs.failing;
    const first = await call('failing', { amount: 1, mode: 'decline' }, key);
    const retry = await call('failing', { amount: 1, mode: 'decline' }, key);

    expect(first.response.status).toBe(402);
    expect(retry.response.status).toBe(402);
    expect(retry.body.error.json.message).toBe('card declined');
    expect(retry.response.headers.get('idempotent-replayed')).toBe('true');
    expect(app.runs.failing).toBe(runs + 1);
    expect(await sqlite.ledger.count()).toBe(rows);
    expect(await sqlite.store.read({ scope: 'alice', key })).toMatchObject({
      outcome: 'rolled_back',
    });
  });
});

describe('rejections are not stored (SPEC S10, S13, S19)', () => {
  it('S10: a key held by a request in flight is 409 IDEMPOTENCY_KEY_IN_USE with Retry-After; the original is untouched', async () => {
    const key = 'k-in-flight';
    // The original: the same request, in flight on the same store until `gate` opens.
    const inside = deferred();
    const gate = deferred();
    const original = createGuard({ store: sqlite.store }).run({
      scope: 'alice',
      key,
      fingerprint: fingerprint({ surface: 'trpc', operation: 'pay', input: { amount: 20 } }),
      operation: 'pay',
      work: async () => {
        inside.resolve();
        await gate.promise;
        return { id: 'original' };
      },
    });
    await inside.promise;
    const runs = app.runs.pay;
    const { response, body } = await call('pay', { amount: 20 }, key).finally(() => gate.resolve());

    expect(response.status).toBe(409);
    expect(body.error.json.data.code).toBe('CONFLICT');
    expect(body.error.json.data.idempotencyCode).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(body.error.json.data.retryAfterSeconds).toBe(
      Number(response.headers.get('retry-after')),
    );
    expect(app.runs.pay).toBe(runs);
    expect(await original).toEqual({ value: { id: 'original' }, replayed: false });
    expect(await sqlite.store.read({ scope: 'alice', key })).toMatchObject({
      result: expect.stringContaining('original'),
    });
  });

  it('S13: 400 and 422 leave no record behind', async () => {
    const missing = await rawMutation(served.url, 'pay', { amount: 1 });
    expect(missing.status).toBe(400);
    await call('pay', { amount: 30 }, 'k-s13');
    const reused = await call('pay', { amount: 31 }, 'k-s13');
    expect(reused.response.status).toBe(422);
    const record = await sqlite.store.read({ scope: 'alice', key: 'k-s13' });
    expect(record?.fingerprint).toBe(
      fingerprint({ surface: 'trpc', operation: 'pay', input: { amount: 30 } }),
    );
  });

  it('S19: errors carry the RFC 9457 type and title next to the SPEC code', async () => {
    const { body } = await call('pay', { amount: 1 }, 'has space');
    expect(body.error.json.data).toMatchObject({
      code: 'BAD_REQUEST',
      httpStatus: 400,
      idempotencyCode: 'IDEMPOTENCY_KEY_INVALID',
      idempotencyType: 'urn:mutation-guard:error:key-invalid',
      idempotencyTitle: 'Invalid idempotency key',
    });
    // S26: the message names the key by hash only.
    expect(body.error.json.message).not.toContain('has space');
  });
});

describe('store and size failures (SPEC S15, S16, S19)', () => {
  it('S15/S19: a store that fails during claim is 503 SERVICE_UNAVAILABLE and the procedure does not run', async () => {
    const { ledger } = sqliteGuard();
    const broken: IdempotencyStore<unknown> = {
      claimAndRun: () => Promise.reject(new Error('connection refused')),
      purge: () => Promise.reject(new Error('unreachable')),
    };
    const down = createApp(createGuard({ store: broken }), ledger as never);
    const server = await serve(down.router);
    try {
      const { response, body } = await call('pay', { amount: 1 }, 'k-down', server.url);
      expect(response.status).toBe(503);
      expect(body.error.json.data.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.error.json.data.idempotencyCode).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      expect(down.runs.pay).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('S16/S19: a result over the size cap is 500 IDEMPOTENCY_RESULT_TOO_LARGE, rolled back and released', async () => {
    const small = sqliteGuard({ maxResultBytes: 16 });
    const capped = createApp(small.guard, small.ledger);
    const server = await serve(capped.router);
    try {
      const { response, body } = await call('pay', { amount: 1 }, 'k-large', server.url);
      expect(response.status).toBe(500);
      expect(body.error.json.data.idempotencyCode).toBe('IDEMPOTENCY_RESULT_TOO_LARGE');
      expect(await small.ledger.count()).toBe(0);
      expect(await small.store.read({ scope: 'alice', key: 'k-large' })).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
