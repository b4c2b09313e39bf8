/**
 * `idempotentFetch` (mutation-guard/client) against the payments demo behind the fault
 * proxy, as a GraphQL POST and as a tRPC call.
 */
import { idempotentFetch, wasReplayed } from '../../src/client/index.js';
import { CREATE_PAYMENT } from '../e2e/http.js';
import { clientContract, type Paid, type PayArgs } from './contract.js';

function headers({ account, key }: PayArgs): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: `Bearer ${account}`,
    ...(key === undefined ? {} : { 'idempotency-key': key }),
  };
}

async function settle(
  call: () => Promise<Response>,
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected loosely in tests
  read: (body: any) => unknown,
): Promise<Paid> {
  try {
    const response = await call();
    const body = await response.json();
    const payment = read(body);
    if (response.ok && payment) {
      return { ok: true, payment: payment as never, replayed: wasReplayed(response) };
    }
    return { ok: false, status: response.status, error: body };
  } catch (error) {
    return { ok: false, status: undefined, error };
  }
}

clientContract('fetch wrapper, GraphQL POST', (url, args) => {
  const pay = idempotentFetch(fetch, args.retry);
  return settle(
    () =>
      pay(`${url}/graphql`, {
        method: 'POST',
        headers: headers(args),
        body: JSON.stringify({ query: CREATE_PAYMENT, variables: { input: args.input } }),
        signal: args.signal ?? null,
      }),
    (body) => body?.data?.createPayment,
  );
});

clientContract('fetch wrapper, tRPC call', (url, args) => {
  const pay = idempotentFetch(undefined, args.retry);
  return settle(
    () =>
      pay(`${url}/trpc/payments.create`, {
        method: 'POST',
        headers: headers(args),
        body: JSON.stringify(args.input),
        signal: args.signal ?? null,
      }),
    (body) => body?.result?.data,
  );
});
