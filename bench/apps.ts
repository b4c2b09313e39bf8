/**
 * The two surfaces under test, each served in process with no socket between: GraphQL Yoga
 * (`yoga.fetch`) and tRPC's fetch adapter. Each as an app without the library would be
 * (`plain`: the insert autocommit; `plainTx`: the insert in a Drizzle transaction of its own)
 * and guarded (`useIdempotency`, `idempotency()`), with the same schema or router, whose
 * mutation inserts one row and whose query answers a constant.
 */
import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { createSchema, createYoga } from 'graphql-yoga';
import superjson from 'superjson';
import { z } from 'zod';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../src/graphql/index.js';
import { createGuard } from '../src/index.js';
import { idempotency } from '../src/trpc/index.js';
import type { BenchDb } from './db.js';

export type Handler = (request: Request) => Promise<Response>;

export interface Surface {
  id: 'graphql' | 'trpc';
  plain: Handler;
  plainTx: Handler;
  guarded: Handler;
  mutation(key?: string): Request;
  query(): Request;
}

type Write = 'autocommit' | 'transaction';

const typeDefs = /* GraphQL */ `
  ${idempotentDirectiveTypeDefs}
  type Payment { id: Int! amount: Int! }
  type Query { ping: Int! }
  type Mutation { pay(amount: Int!): Payment! @idempotent }
`;

/** The POST body of the mutation, the same for every call (one fingerprint per key). */
export const PAY_BODY = JSON.stringify({
  query: 'mutation Pay($amount: Int!) { pay(amount: $amount) { id amount } }',
  variables: { amount: 42 },
  operationName: 'Pay',
});

/** The Yoga servers; `endpoint` lets one HTTP process serve two side by side (http.ts). */
export function yogaApps<Tx>(
  db: BenchDb<Tx>,
  endpoint = { plain: '/graphql', guarded: '/graphql' },
) {
  type Context = { idempotency?: IdempotencyContext<Tx> };
  const schema = (write: Write) =>
    createSchema<Context>({
      typeDefs,
      resolvers: {
        Query: { ping: () => 1 },
        Mutation: {
          pay: async (_: unknown, { amount }: { amount: number }, context: Context) => {
            const tx = context.idempotency?.tx;
            const id = tx
              ? await db.insertTx(tx, amount)
              : write === 'transaction'
                ? await db.insertInTransaction(amount)
                : await db.insert(amount);
            return { id, amount };
          },
        },
      },
    });
  const guard = createGuard({ store: db.store });
  const yoga = (write: Write, graphqlEndpoint: string, plugins = [] as never[]) =>
    createYoga<Context>({ schema: schema(write), logging: false, graphqlEndpoint, plugins });
  return {
    plain: yoga('autocommit', endpoint.plain),
    plainTx: yoga('transaction', endpoint.plain),
    // A constant scope: one tenant, and no start-up warning about the global scope.
    guarded: yoga('autocommit', endpoint.guarded, [
      useIdempotency<Tx>({ guard, scope: () => 'bench' }) as never,
    ]),
  };
}

export function graphqlSurface<Tx>(db: BenchDb<Tx>): Surface {
  const apps = yogaApps(db);
  const post = (body: string, key?: string) =>
    new Request('http://bench/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body,
    });
  return {
    id: 'graphql',
    plain: async (request) => apps.plain.fetch(request),
    plainTx: async (request) => apps.plainTx.fetch(request),
    guarded: async (request) => apps.guarded.fetch(request),
    mutation: (key) => post(PAY_BODY, key),
    query: () => post(JSON.stringify({ query: 'query Ping { ping }', operationName: 'Ping' })),
  };
}

/** tRPC with superjson, as the package's README wires it. */
export function trpcSurface<Tx>(db: BenchDb<Tx>): Surface {
  type Context = { req: Request; resHeaders: Headers; info: unknown };
  const t = initTRPC.context<Context>().create({ transformer: superjson });
  const guard = createGuard({ store: db.store, serializer: superjson });
  const input = z.object({ amount: z.number().int() });
  const pay = t.procedure.input(input);
  const unguarded = (write: Write) =>
    t.router({
      ping: t.procedure.query(() => 1),
      pay: pay.mutation(async ({ input: { amount } }) => ({
        id: await (write === 'transaction' ? db.insertInTransaction(amount) : db.insert(amount)),
        amount,
      })),
    });
  const guarded = t.router({
    ping: t.procedure.query(() => 1),
    pay: pay
      .concat(idempotency({ guard, scope: (_ctx: Context) => 'bench' }))
      .mutation(async ({ ctx, input: { amount } }) => ({
        id: await db.insertTx(ctx.idempotency.tx, amount),
        amount,
      })),
  });
  const serve =
    (app: ReturnType<typeof unguarded> | typeof guarded): Handler =>
    (req) =>
      fetchRequestHandler({
        endpoint: '/trpc',
        req,
        router: app,
        createContext: ({ req, resHeaders, info }) => ({ req, resHeaders, info }),
      });
  return {
    id: 'trpc',
    plain: serve(unguarded('autocommit')),
    plainTx: serve(unguarded('transaction')),
    guarded: serve(guarded),
    mutation: (key) =>
      new Request('http://bench/trpc/pay', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify(superjson.serialize({ amount: 42 })),
      }),
    query: () => new Request('http://bench/trpc/ping'),
  };
}
