/**
 * The tRPC link (mutation-guard/client/trpc) against the payments demo behind the fault
 * proxy: mutations through `httpLink`, queries batched, as the docs wire it; and mutations
 * batched by `httpBatchLink`, each keyed in its own input (SPEC S20).
 */
import {
  createTRPCClient,
  httpBatchLink,
  httpLink,
  splitLink,
  TRPCClientError,
} from '@trpc/client';
import { expect, it } from 'vitest';
import type { PaymentsRouter } from '../../examples/payments/trpc.js';
import { type IdempotencyReceipt, idempotencyLink } from '../../src/client/trpc/index.js';
import { listPayments } from '../e2e/http.js';
import { callerKeyContract } from './caller-key.js';
import { clientContract, type Paid, type PayThrough } from './contract.js';
import { startService } from './service.js';

const payThroughTrpc: PayThrough = async (url, args) => {
  const { account, input, key, signal, retry } = args;
  // Headers the caller sets go where tRPC takes them: the HTTP link's `headers` option.
  const headers = { authorization: `Bearer ${account}`, ...Object.fromEntries(args.headers ?? []) };
  const client = createTRPCClient<PaymentsRouter>({
    links: [
      idempotencyLink(retry),
      splitLink({
        condition: (op) => op.type === 'mutation',
        true: httpLink({ url: `${url}/trpc`, headers }),
        false: httpBatchLink({ url: `${url}/trpc`, headers }),
      }),
    ],
  });
  const context: { idempotency?: IdempotencyReceipt } = {};
  try {
    const payment = await client.payments.create.mutate(
      key === undefined ? input : { ...input, idempotencyKey: key },
      { context, ...(signal ? { signal } : {}) },
    );
    return { ok: true, payment, replayed: context.idempotency!.replayed } satisfies Paid;
  } catch (error) {
    const status = error instanceof TRPCClientError ? error.data?.httpStatus : undefined;
    return { ok: false, status, error };
  }
};

clientContract('tRPC link', payThroughTrpc);
callerKeyContract('tRPC link, a key the caller set in the input', payThroughTrpc, ['option']);

it('S20: mutations batched by httpBatchLink each carry their own key in the input, and queries pass through unkeyed', async () => {
  const service = await startService('sqlite');
  try {
    const account = 'acct_client_trpc_batch';
    const client = createTRPCClient<PaymentsRouter>({
      links: [
        idempotencyLink(),
        httpBatchLink({
          url: `${service.proxy.url}/trpc`,
          headers: { authorization: `Bearer ${account}` },
        }),
      ],
    });
    const inputs = [1, 2, 3].map((n) => ({
      amount: n,
      currency: 'EUR',
      customerId: `cus_batch_${n}`,
    }));
    const paid = await Promise.all(inputs.map((input) => client.payments.create.mutate(input)));
    expect(paid.map((p) => p.amount)).toEqual([1, 2, 3]);
    const batches = service.proxy.exchanges.filter((e) => e.request.path.includes('batch=1'));
    expect(batches).toHaveLength(1); // all three went in one request
    expect(batches[0]!.request.headers['idempotency-key']).toBeUndefined();
    const calls = Object.values(JSON.parse(batches[0]!.request.body)) as {
      idempotencyKey?: unknown;
    }[];
    const keys = calls.map((call) => call.idempotencyKey);
    expect(keys.every((key) => typeof key === 'string')).toBe(true);
    expect(new Set(keys).size).toBe(3);

    await client.payments.list.query();
    const listing = service.proxy.exchanges.at(-1)!;
    expect(listing.request.path).toContain('payments.list');
    expect(listing.request.path).not.toContain('idempotencyKey');
    expect(await listPayments(service.direct, account)).toHaveLength(3);
  } finally {
    await service.stop();
  }
});
