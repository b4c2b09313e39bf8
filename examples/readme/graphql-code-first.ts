import {
  GraphQLID,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import { createYoga } from 'graphql-yoga';
import { createGuard } from 'mutation-guard';
import { idempotentDirective, useIdempotency } from 'mutation-guard/graphql';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';

const guard = createGuard({ store: sqliteStore(openSqlite(':memory:')) });

const Payment = new GraphQLObjectType({
  name: 'Payment',
  fields: { id: { type: new GraphQLNonNull(GraphQLID) }, amount: { type: GraphQLInt } },
});

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { ping: { type: GraphQLString } } }),
  mutation: new GraphQLObjectType({
    name: 'Mutation',
    fields: {
      refund: {
        type: new GraphQLNonNull(Payment),
        args: {
          amount: { type: new GraphQLNonNull(GraphQLInt) },
          idempotencyKey: { type: GraphQLString },
        },
        // Code-first marking; `{ retention: 3_600_000 }` (ms) or `{ required: false }` also work.
        extensions: { idempotent: true },
        resolve: (_root, args: { amount: number }) => ({ id: 'refund_1', amount: args.amount }),
      },
    },
  }),
  // Lets clients write `refund(amount: 5) @idempotent(key: "...")` in operations.
  directives: [idempotentDirective],
});

export const codeFirstYoga = createYoga({
  schema,
  // The scope is whose answer it is: the account your authentication names.
  context: ({ request }) => ({ accountId: request.headers.get('x-account') ?? 'anonymous' }),
  plugins: [useIdempotency({ guard, scope: (ctx: { accountId: string }) => ctx.accountId })],
});
