/**
 * `idempotentFetch` (mutation-guard/client) against the payments demo behind the fault
 * proxy, as a GraphQL POST and as a tRPC call.
 */
import { idempotentFetch, wasReplayed } from '../../src/client/index.js';
import { CREATE_PAYMENT } from '../e2e/http.js';
import { callerKeyContract } from './caller-key.js';
import { clientContract, type Paid, type PayArgs, type PayThrough } from './contract.js';

/** The shapes `fetch` takes `init.headers` in. */
type HeaderShape = 'record' | 'Headers' | 'pairs';

function headers({ account, key, headers: own = [] }: PayArgs, shape: HeaderShape): HeadersInit {
  const pairs: [string, string][] = [
    ['content-type', 'application/json'],
    ['authorization', `Bearer ${account}`],
    ...(key === undefined ? [] : [['idempotency-key', key] as [string, string]]),
    ...own,
  ];
  if (shape === 'Headers') return new Headers(pairs);
  if (shape === 'pairs') return pairs;
  return Object.fromEntries(pairs);
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

const payGraphql =
  (shape: HeaderShape = 'record'): PayThrough =>
  (url, args) => {
    const pay = idempotentFetch(fetch, args.retry);
    return settle(
      () =>
        pay(`${url}/graphql`, {
          method: 'POST',
          headers: headers(args, shape),
          body: JSON.stringify({ query: CREATE_PAYMENT, variables: { input: args.input } }),
          signal: args.signal ?? null,
        }),
      (body) => body?.data?.createPayment,
    );
  };

clientContract('fetch wrapper, GraphQL POST', payGraphql());
for (const shape of ['record', 'Headers', 'pairs'] as const) {
  callerKeyContract(
    `fetch wrapper, a key the caller set in init.headers (${shape})`,
    payGraphql(shape),
    ['header'],
  );
}

clientContract('fetch wrapper, tRPC call', (url, args) => {
  const pay = idempotentFetch(undefined, args.retry);
  return settle(
    () =>
      pay(`${url}/trpc/payments.create`, {
        method: 'POST',
        headers: headers(args, 'record'),
        body: JSON.stringify(args.input),
        signal: args.signal ?? null,
      }),
    (body) => body?.result?.data,
  );
});
