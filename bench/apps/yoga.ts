/**
 * The GraphQL app under test, three times: `plain` is the server an app would have without
 * the library, `plainTx` the same with the insert in a transaction of its own (what a
 * careful app does without the library), `guarded` the same schema and resolvers with
 * `useIdempotency` installed. The one mutation inserts one row: through the guard's
 * transaction when guarded, on the database itself (autocommit, or in its own Drizzle
 * transaction) when not.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
import { createGuard } from '../../src/index.js';
import type { BenchDb } from '../db/types.js';

const typeDefs = /* GraphQL */ `
  ${idempotentDirectiveTypeDefs}
  type Payment {
    id: Int!
    amount: Int!
  }
  type Query {
    ping: Int!
  }
  type Mutation {
    pay(amount: Int!): Payment! @idempotent
  }
`;

export const PAY_MUTATION = 'mutation Pay($amount: Int!) { pay(amount: $amount) { id amount } }';
export const PING_QUERY = 'query Ping { ping }';

type Context = Record<string, unknown>;

/** How an unguarded resolver writes: autocommit, or in a Drizzle transaction of its own. */
type UnguardedWrite = 'autocommit' | 'transaction';

function schema<Tx>(db: BenchDb<Tx>, unguarded: UnguardedWrite = 'autocommit') {
  const insert = (amount: number) =>
    unguarded === 'transaction' ? db.insertInTransaction(amount) : db.insert(amount);
  return createSchema<Context>({
    typeDefs,
    resolvers: {
      Query: { ping: () => 1 },
      Mutation: {
        pay: async (_: unknown, { amount }: { amount: number }, context: Context) => {
          const guarded = context.idempotency as IdempotencyContext<Tx> | undefined;
          const id = guarded ? await db.insertTx(guarded.tx, amount) : await insert(amount);
          return { id, amount };
        },
      },
    },
  });
}

/** Both servers on one database; `endpoint` lets one HTTP process serve them side by side. */
export function yogaApps<Tx>(
  db: BenchDb<Tx>,
  endpoints = { plain: '/graphql', guarded: '/graphql' },
) {
  const guard = createGuard({ store: db.store });
  const plain = createYoga<Context>({
    schema: schema(db),
    logging: false,
    graphqlEndpoint: endpoints.plain,
  });
  const plainTx = createYoga<Context>({
    schema: schema(db, 'transaction'),
    logging: false,
    graphqlEndpoint: endpoints.plain,
  });
  const guarded = createYoga<Context>({
    schema: schema(db),
    logging: false,
    graphqlEndpoint: endpoints.guarded,
    // A constant scope: one tenant, and no start-up warning about the global scope.
    plugins: [useIdempotency<Tx>({ guard, scope: () => 'bench' })],
  });
  return { plain, plainTx, guarded };
}

/** The POST body of the mutation, the same for every call (so one fingerprint per key). */
export const PAY_BODY = JSON.stringify({
  query: PAY_MUTATION,
  variables: { amount: 42 },
  operationName: 'Pay',
});
export const PING_BODY = JSON.stringify({ query: PING_QUERY, operationName: 'Ping' });
