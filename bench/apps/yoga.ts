/**
 * The GraphQL app under test: `plain` is the server an app would have without the library,
 * `plainTx` the same with the insert in a transaction of its own (what a careful app does
 * without the library), `guarded` the same schema and resolvers with `useIdempotency`
 * installed, and `leastAdapter` and `leastReplay` the least any guarding plugin does on a
 * fresh call and on a replay (below). The one mutation inserts one row: through the guard's
 * transaction when guarded, on the database itself (autocommit, or in its own Drizzle
 * transaction) when not.
 */
import { type ExecutionArgs, type ExecutionResult, getOperationAST } from 'graphql';
import { createSchema, createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { REPLAYED_HEADER } from '../../src/core/vocabulary.js';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
import { coerceVariables } from '../../src/graphql/variables.js';
import { createGuard } from '../../src/index.js';
import type { BenchDb } from '../db/types.js';
import { leastReplayLookup } from './least-replay.js';
import { type LeastRequest, leastRequest } from './least-request.js';

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
  const leastReplay = createYoga<Context>({
    schema: schema(db),
    logging: false,
    graphqlEndpoint: endpoints.plain,
    plugins: [leastReplayPlugin(db)],
  });
  return { plain, plainTx, guarded, leastAdapter, leastReplay };
}

/**
 * The least a guarding plugin does on a fresh call, with no guard: what it must before it can
 * know the call is fresh (`requestOf`: the key from the header and the request's digest, as
 * the least replay takes them, least-request.ts), then it replaces the execution, as
 * `useIdempotency` does, to hand the resolvers a transaction handle in the context and run the
 * operation where the store runs guarded work (`db.workContext`). Built on a database whose
 * `insert` stores a record too, it is the adapter's fresh floor (bench/cases/surfaces.ts). The
 * handle is a stand-in, so the resolver writes as an unguarded one does; the record it writes
 * carries a key and fingerprint of the bench's own, not these (their work, not their values,
 * is the point).
 */
function leastPlugin<Tx>(db: BenchDb<Tx>): Plugin<Context> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { key } = requestOf(args);
      setExecuteFn((execArgs: ExecutionArgs) => {
        const context = execArgs.contextValue as Context;
        context.leastAdapter = { tx: undefined, key };
        return db.workContext(async () => executeFn(execArgs));
      });
    },
  };
}

/**
 * The least a guarding plugin does to answer a replay (least-replay.ts): it replaces the
 * execution, as `useIdempotency` does, with one that takes the record of the request's key
 * and digest (`requestOf`) and returns the stored result; the response is marked as a
 * replay. No resolver runs.
 */
function leastReplayPlugin<Tx>(db: BenchDb<Tx>): Plugin<Context> {
  const lookup = leastReplayLookup(db);
  const replayed = new WeakSet<Request>();
  return {
    onExecute({ args, setExecuteFn }) {
      const { key } = requestOf(args);
      setExecuteFn(async () => {
        const stored = await lookup(key);
        replayed.add((args.contextValue as YogaInitialContext).request);
        return JSON.parse(stored) as ExecutionResult;
      });
    },
    onResponse({ request, response }) {
      if (replayed.has(request)) response.headers.set(REPLAYED_HEADER, 'true');
    },
  };
}

/**
 * The request's key and digest (least-request.ts). The digest covers the query text as sent and
 * the coerced variables: S5 fingerprints coerced variables, so a plugin coerces them itself
 * before the execution does (printing the document is left out: it can be cached per document).
 */
function requestOf(args: ExecutionArgs): LeastRequest {
  const { request, params } = args.contextValue as YogaInitialContext;
  const operation = getOperationAST(args.document, args.operationName);
  const variables = coerceVariables(
    args.schema,
    operation?.variableDefinitions ?? [],
    (args.variableValues ?? {}) as Record<string, unknown>,
  );
  return leastRequest(request.headers, JSON.stringify([params.query, variables?.values]));
}

/** The POST body of the mutation, the same for every call (so one fingerprint per key). */
export const PAY_BODY = JSON.stringify({
  query: PAY_MUTATION,
  variables: { amount: 42 },
  operationName: 'Pay',
});
export const PING_BODY = JSON.stringify({ query: PING_QUERY, operationName: 'Ping' });
