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
import { callerKeyContract } from './caller-key.js';
import {
  clientContract,
  libraryRetryKeepsTheKey,
  type Paid,
  type Payment,
  type PayThrough,
} from './contract.js';

/** The shapes urql takes a call's `fetchOptions.headers` in, and `fetchOptions` as a function. */
type HeaderShape = 'record' | 'Headers' | 'pairs' | 'function';

function payThroughUrql(shape: HeaderShape = 'record'): PayThrough {
  return async (url, { account, input, key, headers, signal, retry }) => {
    const client = new Client({
      url: `${url}/graphql`,
      exchanges: [idempotencyExchange(retry), fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${account}` } },
    });
    // A call's own fetchOptions replace the client's: the account goes along.
    const own: [string, string][] | undefined = headers && [
      ['authorization', `Bearer ${account}`],
      ...headers,
    ];
    const fetchOptions = own && { headers: headersIn(shape, own) };
    const result = await client
      .mutation<{ createPayment: Payment }>(
        CREATE_PAYMENT,
        { input },
        {
          ...(key === undefined ? {} : { idempotencyKey: key }),
          ...(signal ? { signal } : {}),
          ...(fetchOptions
            ? { fetchOptions: shape === 'function' ? () => fetchOptions : fetchOptions }
            : {}),
        },
      )
      .toPromise();
    if (result.error || !result.data) {
      const status = (result.error?.response as Response | undefined)?.status;
      return { ok: false, status, error: result.error } satisfies Paid;
    }
    const receipt = result.extensions?.idempotency as IdempotencyReceipt;
    return { ok: true, payment: result.data.createPayment, replayed: receipt.replayed };
  };
}

function headersIn(shape: HeaderShape, pairs: [string, string][]): HeadersInit {
  if (shape === 'Headers') return new Headers(pairs);
  if (shape === 'pairs') return pairs;
  return Object.fromEntries(pairs);
}

clientContract('urql exchange', payThroughUrql());
for (const shape of ['record', 'Headers', 'pairs', 'function'] as const) {
  callerKeyContract(
    `urql exchange, a key the caller set in fetchOptions.headers (${shape})`,
    payThroughUrql(shape),
    shape === 'record' ? ['header', 'option'] : ['header'],
  );
}

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
