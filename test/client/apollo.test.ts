/**
 * The Apollo Client 4 link (mutation-guard/client/apollo) against the payments demo behind
 * the fault proxy, alone and under Apollo's own RetryLink.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { ApolloLink } from '@apollo/client/link';
import { RetryLink } from '@apollo/client/link/retry';
import { type IdempotencyReceipt, idempotencyLink } from '../../src/client/apollo/index.js';
import { CREATE_PAYMENT } from '../e2e/http.js';
import { callerKeyContract } from './caller-key.js';
import {
  clientContract,
  libraryRetryKeepsTheKey,
  type Paid,
  type Payment,
  type PayThrough,
} from './contract.js';

const PAY = gql(CREATE_PAYMENT);

function statusOf(error: unknown): number | undefined {
  // Apollo hands over a GraphQL error answer's errors, not its HTTP status: the status the
  // server gave follows from the code it names.
  const errors = (error as { errors?: { extensions?: { code?: string } }[] }).errors;
  const code = errors?.[0]?.extensions?.code;
  if (code === 'IDEMPOTENCY_KEY_REUSED') return 422;
  if (code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED') return 400;
  return (error as { statusCode?: number }).statusCode;
}

const payThroughApollo: PayThrough = async (
  url,
  { account, input, key, headers, signal, retry },
) => {
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: ApolloLink.from([
      idempotencyLink(retry),
      new HttpLink({ uri: `${url}/graphql`, headers: { authorization: `Bearer ${account}` } }),
    ]),
  });
  try {
    const result = await client.mutate<{ createPayment: Payment }>({
      mutation: PAY,
      variables: { input },
      context: {
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(headers ? { headers: Object.fromEntries(headers) } : {}),
        ...(signal ? { fetchOptions: { signal } } : {}),
      },
    });
    if (result.error || !result.data)
      return { ok: false, status: statusOf(result.error), error: result.error };
    const receipt = result.extensions?.idempotency as IdempotencyReceipt;
    const { __typename: _, ...payment } = result.data.createPayment as Payment & {
      __typename?: string;
    };
    return { ok: true, payment, replayed: receipt.replayed } satisfies Paid;
  } catch (error) {
    return { ok: false, status: statusOf(error), error };
  }
};

clientContract('Apollo link', payThroughApollo);
callerKeyContract('Apollo link, a key the caller set', payThroughApollo, ['header', 'option']);

libraryRetryKeepsTheKey("under Apollo's RetryLink", async (url, account, input) => {
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: ApolloLink.from([
      new RetryLink({ delay: { initial: 20, jitter: true }, attempts: { max: 5 } }),
      idempotencyLink({ attempts: 1 }), // RetryLink does the retrying here
      new HttpLink({ uri: `${url}/graphql`, headers: { authorization: `Bearer ${account}` } }),
    ]),
  });
  return client.mutate({ mutation: PAY, variables: { input } });
});
