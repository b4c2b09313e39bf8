import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { connect, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const { guard, ledger } = sqliteGuard();
const app = createApp(guard, ledger);

describe.each(['standalone', 'fetch', 'fastify'] as const)(
  'batches (SPEC S20), %s adapter',
  (adapter) => {
    let served: Served;
    beforeAll(async () => {
      served = await serve(app.router, adapter);
    });
    afterAll(() => served.close());

    it('S20: one header key shared by two guarded mutations in one batch is 400 for both, nothing runs', async () => {
      const { trpc, responses } = connect(served.url, {
        batch: true,
        headers: () => ({ 'Idempotency-Key': `k-batch-shared-${adapter}` }),
      });
      const before = { ...app.runs };
      const rowsBefore = await ledger.count();
      const results = await Promise.allSettled([
        trpc.pay.mutate({ amount: 1 }),
        trpc.refund.mutate({ amount: 1 }),
      ]);

      expect(responses).toHaveLength(1);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        const error = (result as PromiseRejectedResult).reason as TRPCClientError<
          typeof app.router
        >;
        expect(error).toBeInstanceOf(TRPCClientError);
        expect(error.data?.httpStatus).toBe(400);
        expect(error.data?.idempotencyCode).toBe('IDEMPOTENCY_KEY_INVALID');
      }
      expect(app.runs).toEqual(before);
      expect(await ledger.count()).toBe(rowsBefore);
    });

    it('S20: keys inside each call input work in one batch', async () => {
      const { trpc, responses } = connect(served.url, { batch: true });
      const before = app.runs.pay;
      const calls = () => [
        trpc.pay.mutate({ amount: 2, idempotencyKey: `k-batch-a-${adapter}` }),
        trpc.pay.mutate({ amount: 2, idempotencyKey: `k-batch-b-${adapter}` }),
      ];
      const first = await Promise.all(calls());
      const again = await Promise.all(calls());

      expect(responses).toHaveLength(2);
      expect(app.runs.pay).toBe(before + 2);
      expect(again).toEqual(first);
      expect(first[0]?.run).not.toBe(first[1]?.run);
    });

    it('S20: a header key with one guarded mutation in a batch is fine', async () => {
      const { trpc } = connect(served.url, {
        batch: true,
        headers: () => ({ 'Idempotency-Key': `k-batch-one-${adapter}` }),
      });
      const [paid, runs] = await Promise.all([trpc.pay.mutate({ amount: 3 }), trpc.runs.query()]);
      expect(paid.amount).toBe(3);
      expect(runs.pay).toBeGreaterThan(0);
    });

    it('S20: a header key with one guarded and one unguarded mutation in a batch is fine', async () => {
      const { trpc } = connect(served.url, {
        batch: true,
        headers: () => ({ 'Idempotency-Key': `k-batch-mixed-${adapter}` }),
      });
      const [paid, plain] = await Promise.all([
        trpc.pay.mutate({ amount: 4 }),
        trpc.unguarded.mutate({ amount: 4 }),
      ]);
      expect(paid.amount).toBe(4);
      expect(plain.amount).toBe(4);
    });
  },
);

describe('batches without request info in the context (SPEC S20)', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(app.router, 'standalone', { withInfo: false });
  });
  afterAll(() => served.close());

  it('S20: a header-keyed batch of two calls is refused from the URL alone, nothing runs', async () => {
    const { trpc } = connect(served.url, {
      batch: true,
      headers: () => ({ 'Idempotency-Key': 'k-no-info' }),
    });
    const before = { ...app.runs };
    const results = await Promise.allSettled([
      trpc.pay.mutate({ amount: 5 }),
      trpc.refund.mutate({ amount: 5 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(app.runs).toEqual(before);
  });

  it('S20: a header-keyed batch of one call runs', async () => {
    const { trpc } = connect(served.url, {
      batch: true,
      headers: () => ({ 'Idempotency-Key': 'k-no-info-one' }),
    });
    expect((await trpc.pay.mutate({ amount: 6 })).amount).toBe(6);
  });
});
