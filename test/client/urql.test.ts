/**
 * The urql exchange (mutation-guard/client/urql) against the payments demo behind the fault
 * proxy, alone and composed with urql's retryExchange.
 */
import { Client, fetchExchange } from '@urql/core';
import { retryExchange } from '@urql/exchange-retry';
import {
  type IdempotencyReceipt,
  idempotencyExchange,
  retryIf,
} from '../../src/client/urql/index.js';
import { CREATE_PAYMENT } from '../e2e/http.js';
import { clientContract, libraryRetryKeepsTheKey, type Paid, type Payment } from './contract.js';

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

libraryRetryKeepsTheKey("composed with urql's retryExchange", (url, account, input) => {
  const client = new Client({
    url: `${url}/graphql`,
    exchanges: [
      retryExchange({ retryIf, initialDelayMs: 20, maxNumberAttempts: 5 }),
      idempotencyExchange({ attempts: 1 }), // retryExchange does the retrying here
      fetchExchange,
    ],
    fetchOptions: { headers: { authorization: `Bearer ${account}` } },
  });
  return client.mutation(CREATE_PAYMENT, { input }).toPromise();
});
