/**
 * The GraphQL app under test: `plain` is the server an app would have without the library,
 * `plainTx` the same with the insert in a transaction of its own (what a careful app does
 * without the library), `guarded` the same schema and resolvers with `useIdempotency`
 * installed, and `leastAdapter` the least any guarding plugin does (below). The one mutation
 * inserts one row: through the guard's transaction when guarded, on the database itself
 * (autocommit, or in its own Drizzle transaction) when not.
 */
import type { ExecutionArgs } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
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
  const leastAdapter = createYoga<Context>({
    schema: schema(db),
    logging: false,
    graphqlEndpoint: endpoints.plain,
    plugins: [leastPlugin(db)],
  });
  return { plain, plainTx, guarded, leastAdapter };
}

/**
 * The least a guarding plugin does, with no guard: it replaces the execution, as
 * `useIdempotency` does, to hand the resolvers a transaction handle in the context and run
 * the operation where the store runs guarded work (`db.workContext`). Built on a database
 * whose `insert` stores a record too, it is the adapter's fresh floor (bench/cases/surfaces.ts).
 * The handle is a stand-in, so the resolver writes as an unguarded one does.
 */
function leastPlugin<Tx>(db: BenchDb<Tx>): Plugin<Context> {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args: ExecutionArgs) => {
        const context = args.contextValue as Context;
        context.leastAdapter = { tx: undefined };
        return db.workContext(async () => executeFn(args));
      });
    },
  };
}

/** The POST body of the mutation, the same for every call (so one fingerprint per key). */
export const PAY_BODY = JSON.stringify({
  query: PAY_MUTATION,
  variables: { amount: 42 },
  operationName: 'Pay',
});
export const PING_BODY = JSON.stringify({ query: PING_QUERY, operationName: 'Ping' });
