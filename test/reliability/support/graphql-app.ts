/** The GraphQL half of the payments service: Yoga with `pay` marked `@idempotent`. */
import { createSchema, createYoga } from 'graphql-yoga';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../../src/graphql/index.js';
import type { Guard } from '../../../src/index.js';
import type { Pay } from './app.js';

export function graphqlHandler(
  guard: Guard<unknown>,
  pay: Pay,
  accountOf: (value: string | null) => string,
) {
  return createYoga({
    graphqlEndpoint: '/graphql',
    logging: false,
    schema: createSchema<Record<string, unknown>>({
      typeDefs: /* GraphQL */ `
        ${idempotentDirectiveTypeDefs}
        type Payment { paymentId: Int!, scope: String!, amount: Int!, pid: Int! }
        type Query { ok: Boolean! }
        type Mutation { pay(amount: Int!, idempotencyKey: String): Payment! @idempotent }
      `,
      resolvers: {
        Query: { ok: () => true },
        Mutation: {
          pay: (_: unknown, args: { amount: number }, context: Record<string, unknown>) => {
            const idem = context.idempotency as IdempotencyContext;
            // Resolvers get only the key's hash (S26); the payment row records that.
            return pay(idem.tx, idem.scope, `gql:${idem.keyHash}`, args.amount);
          },
        },
      },
    }),
    plugins: [
      useIdempotency<unknown>({
        guard,
        scope: (ctx) => accountOf((ctx.request as Request).headers.get('x-account')),
      }),
    ],
  });
}
