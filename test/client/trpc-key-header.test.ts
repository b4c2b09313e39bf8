/**
 * The tRPC link and an `Idempotency-Key` header the caller sets through the HTTP link's
 * `headers` option (SPEC S1, S28). The link runs before that option is read, so it cannot see
 * such a header: the key the caller means must reach the link too (the input, or
 * `context.idempotencyKey`), else the server gets two keys and refuses the call.
 */
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PaymentsRouter } from '../../examples/payments/trpc.js';
import { idempotencyLink } from '../../src/client/trpc/index.js';
import { listPayments } from '../e2e/http.js';
import { exchangesOf, keyOf } from './contract.js';
import { type Service, startService } from './service.js';

let service: Service;
beforeAll(async () => {
  service = await startService('sqlite');
});
afterAll(() => service?.stop());

const RETRY = { attempts: 5, baseDelayMs: 20, maxDelayMs: 100 };

it('S28: a key in context.idempotencyKey, which the HTTP link also sends as the header, is the one in the input and the header on every attempt', async () => {
  const account = 'acct_trpc_context_key';
  const client = createTRPCClient<PaymentsRouter>({
    links: [
      idempotencyLink(RETRY),
      httpLink({
        url: `${service.proxy.url}/trpc`,
        headers: ({ op }) => ({
          authorization: `Bearer ${account}`,
          'Idempotency-Key': String(op.context.idempotencyKey),
        }),
      }),
    ],
  });
  const input = { amount: 4502, currency: 'EUR', customerId: 'cus_trpc_context_key' };
  service.proxy.setFaults(() =>
    exchangesOf(service, input.customerId).length === 0
      ? { kind: 'drop-response' }
      : { kind: 'pass' },
  );

  await client.payments.create.mutate(input, { context: { idempotencyKey: 'order-45-2' } });

  const log = exchangesOf(service, input.customerId);
  expect(log.map((e) => [e.status, e.request.headers['idempotency-key'], keyOf(e)])).toEqual([
    [200, 'order-45-2', 'order-45-2'],
    [200, 'order-45-2', 'order-45-2'],
  ]);
  expect(await listPayments(service.direct, account)).toHaveLength(1);
});

it('S1/S28: a header key the link cannot see is never quietly replaced: the server refuses the call, once, and nothing is paid', async () => {
  const account = 'acct_trpc_header_key';
  const client = createTRPCClient<PaymentsRouter>({
    links: [
      idempotencyLink(RETRY),
      httpLink({
        url: `${service.proxy.url}/trpc`,
        headers: { authorization: `Bearer ${account}`, 'Idempotency-Key': 'order-45-3' },
      }),
    ],
  });
  const input = { amount: 4502, currency: 'EUR', customerId: 'cus_trpc_header_key' };
  service.proxy.setFaults(() => ({ kind: 'pass' }));

  const error = await client.payments.create.mutate(input).catch((e: unknown) => e);

  expect(error).toBeInstanceOf(TRPCClientError);
  expect((error as TRPCClientError<PaymentsRouter>).data?.httpStatus).toBe(400);
  expect((error as Error).message).toMatch(/disagree/);
  expect(exchangesOf(service, input.customerId)).toHaveLength(1);
  expect(await listPayments(service.direct, account)).toHaveLength(0);
});
