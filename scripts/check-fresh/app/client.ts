// idempotentFetch against the Yoga server's fetch: the first answer is lost on the way back,
// and the retry, with the same key, gets the stored answer.
import { idempotentFetch, wasReplayed } from 'mutation-guard/client';
import { expect } from './expect.js';
import { createGraphqlServer, PAY } from './graphql.js';

export async function checkClient(): Promise<string> {
  const server = createGraphqlServer();
  const keys: (string | null)[] = [];
  const send = idempotentFetch(
    async (input, init) => {
      const request = new Request(input, init);
      keys.push(request.headers.get('idempotency-key'));
      const response = await server.fetch(request);
      // The server ran the mutation, but its answer never reaches the client.
      if (keys.length === 1) throw new TypeError('fetch failed (dropped by the check)');
      return response;
    },
    { attempts: 3, baseDelayMs: 1 },
  );
  const response = await send('http://app.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-account': 'acct_1' },
    body: JSON.stringify(PAY),
  });
  const body = await response.text();
  expect(response.status === 200, `answer: HTTP ${response.status} ${body}`);
  expect(keys.length === 2, `${keys.length} attempts, expected 2`);
  expect(typeof keys[0] === 'string' && keys[0].length > 0, 'first attempt had no key');
  expect(keys[1] === keys[0], `retry changed the key: ${keys[0]} then ${keys[1]}`);
  expect(wasReplayed(response), 'the retry was not answered with the replay');
  expect(server.paymentCount() === 1, `${server.paymentCount()} payments, expected 1`);
  return `idempotentFetch: one key (${keys[0]}) across a retry, replayed ${body}`;
}
