import { createTRPCClient, httpBatchLink, httpLink, splitLink } from '@trpc/client';
import { idempotentFetch, wasReplayed } from 'mutation-guard/client';
import { idempotencyLink } from 'mutation-guard/client/trpc';
import superjson from 'superjson';
import type { appRouter } from './trpc.js';

// Any HTTP code: `fetch` in, `fetch` out. Each call is one intent with one key, the same on
// every retry; network errors, 409 "key in use" and 503 are retried, nothing else.
const send = idempotentFetch(fetch, { attempts: 5, deadlineMs: 30_000 });

export async function payOrder(api: string, order: { id: string; amount: number }) {
  const response = await send(`${api}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-account': 'acct_1',
      // An intent that must survive a page reload brings its own key: the order's id.
      'Idempotency-Key': `order-${order.id}`,
    },
    body: JSON.stringify({
      query: 'mutation Pay($input: PayInput!) { pay(input: $input) { id amount } }',
      variables: { input: { amount: order.amount } },
    }),
  });
  return { body: await response.json(), replayed: wasReplayed(response) };
}

// tRPC: the link keys every mutation in its input (so batches work too) and retries it.
// Mutations go one per request, so that each answer's Idempotent-Replayed is its own.
export function paymentsClient(api: string) {
  const options = {
    url: `${api}/trpc`,
    transformer: superjson,
    headers: { 'x-account': 'acct_1' },
  };
  return createTRPCClient<typeof appRouter>({
    links: [
      idempotencyLink({ attempts: 5 }),
      splitLink({
        condition: (op) => op.type === 'mutation',
        true: httpLink(options),
        false: httpBatchLink(options),
      }),
    ],
  });
}
