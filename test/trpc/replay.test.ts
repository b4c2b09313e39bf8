import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { connect, rawMutation, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const { guard, ledger } = sqliteGuard();
const app = createApp(guard, ledger);

describe.each(['standalone', 'fetch', 'fastify'] as const)(
  'replays over HTTP, %s adapter',
  (adapter) => {
    let served: Served;
    beforeAll(async () => {
      served = await serve(app.router, adapter);
    });
    afterAll(() => served.close());

    it('S9: a retry with the header key gets identical output (Date, BigInt, Map, Set) without running again', async () => {
      const key = `replay-header-${adapter}`;
      const { trpc, responses } = connect(served.url, {
        headers: () => ({ 'Idempotency-Key': key }),
      });
      const before = app.runs.pay;
      const first = await trpc.pay.mutate({ amount: 7 });
      const second = await trpc.pay.mutate({ amount: 7 });

      expect(app.runs.pay).toBe(before + 1);
      expect(second).toEqual(first);
      expect(second.at).toBeInstanceOf(Date);
      expect(second.at.getTime()).toBe(first.at.getTime());
      expect(second.cents).toBe(7n * 10n ** 20n);
      expect(second.tags).toEqual(new Set(['paid', 'pay']));
      expect(second.meta.get('amount')).toBe(7);
      expect(responses[0]?.get('idempotent-replayed')).toBeNull();
      expect(responses[1]?.get('idempotent-replayed')).toBe('true');
    });

    it('S9: a retry with the key in the input replays, through httpBatchLink too', async () => {
      const plain = connect(served.url).trpc;
      const batched = connect(served.url, { batch: true });
      const input = { amount: 3, idempotencyKey: `replay-input-${adapter}` };
      const before = app.runs.pay;
      const first = await plain.pay.mutate(input);
      const again = await batched.trpc.pay.mutate(input);

      expect(app.runs.pay).toBe(before + 1);
      expect(again).toEqual(first);
      expect(batched.responses[0]?.get('idempotent-replayed')).toBe('true');
      expect(await ledger.count()).toBeGreaterThan(0);
    });

    it('S9: the raw HTTP reply of a replay is the first reply, byte for byte, with Idempotent-Replayed: true', async () => {
      const headers = { 'Idempotency-Key': `replay-raw-${adapter}` };
      const first = await rawMutation(served.url, 'pay', { amount: 11 }, headers);
      const second = await rawMutation(served.url, 'pay', { amount: 11 }, headers);

      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(await second.text()).toBe(await first.text());
    });
  },
);
