/**
 * The urql exchange (mutation-guard/client/urql) against the payments demo behind the fault
 * proxy, alone and composed with urql's retryExchange.
 */
import { Client, fetchExchange } from '@urql/core';
import { retryExchange } from '@urql/exchange-retry';
import { expect, it } from 'vitest';
import {
  type IdempotencyReceipt,
  idempotencyExchange,
  retryIf,
} from '../../src/client/urql/index.js';
import { CREATE_PAYMENT, listPayments } from '../e2e/http.js';
import { clientContract, exchangesOf, keyOf, type Paid, type Payment } from './contract.js';
import { startService } from './service.js';

clientContract('urql exchange', async (url, { account, input, key, signal, retry }) => {
  const client = new Client({
    url: `${url}/graphql`,
    exchanges: [idempotencyExchange(retry), fetchExchange],
    fetchOptions: { headers: { authorization: `Bearer ${account}` } },
  });
  const result = await client
    .mutation<{ createPayment: Payment }>(
      CREATE_PAYMENT,
      { input },
      { ...(key === undefined ? {} : { idempotencyKey: key }), ...(signal ? { signal } : {}) },
    )
    .toPromise();
  if (result.error || !result.data) {
    const status = (result.error?.response as Response | undefined)?.status;
    return { ok: false, status, error: result.error } satisfies Paid;
  }
  const receipt = result.extensions?.idempotency as IdempotencyReceipt;
  return { ok: true, payment: result.data.createPayment, replayed: receipt.replayed };
});

it("S28: composed with urql's retryExchange, every retry it makes sends the key of the first attempt", async () => {
  const service = await startService('sqlite');
  try {
    const account = 'acct_client_urql_retryexchange';
    const input = { amount: 7, currency: 'EUR', customerId: 'cus_retryexchange' };
    service.proxy.setFaults(() =>
      exchangesOf(service, input.customerId).length < 2
        ? { kind: 'drop-response' }
        : { kind: 'pass' },
    );
    const client = new Client({
      url: `${service.proxy.url}/graphql`,
      exchanges: [
        retryExchange({ retryIf, initialDelayMs: 20, maxNumberAttempts: 5 }),
        idempotencyExchange({ attempts: 1 }), // retryExchange does the retrying here
        fetchExchange,
      ],
      fetchOptions: { headers: { authorization: `Bearer ${account}` } },
    });
    const result = await client.mutation(CREATE_PAYMENT, { input }).toPromise();
    expect(result.error).toBeUndefined();
    const log = exchangesOf(service, input.customerId);
    expect(log).toHaveLength(3);
    expect(new Set(log.map(keyOf)).size).toBe(1);
    expect(result.extensions?.idempotency).toMatchObject({ replayed: true });
    expect(await listPayments(service.direct, account)).toHaveLength(1);
  } finally {
    await service.stop();
  }
});
