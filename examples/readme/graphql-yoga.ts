import { sql } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createSchema, createYoga } from 'graphql-yoga';
import { createGuard } from 'mutation-guard';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from 'mutation-guard/graphql';
import { openSqlite, type SqliteDatabase, sqliteStore } from 'mutation-guard/sqlite';

const payments = sqliteTable('payments', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull(),
  amount: integer('amount').notNull(),
});

const db = openSqlite(':memory:'); // a file path in real use; creates the idempotency table
db.run(
  sql`CREATE TABLE payments (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, amount INTEGER NOT NULL)`,
);
const guard = createGuard({ store: sqliteStore(db) });

interface Context {
  accountId: string;
  /** Set by the plugin while a guarded mutation runs. */
  idempotency: IdempotencyContext<SqliteDatabase>;
}

export const yoga = createYoga<{ accountId: string }>({
  schema: createSchema<Context>({
    typeDefs: [
      idempotentDirectiveTypeDefs,
      /* GraphQL */ `
        type Payment { id: ID!, amount: Int! }
        input PayInput { amount: Int!, idempotencyKey: String }
        type Query { ping: String }
        type Mutation { pay(input: PayInput!): Payment! @idempotent }
      `,
    ],
    resolvers: {
      Mutation: {
        pay: (_root, { input }: { input: { amount: number } }, ctx) => {
          const payment = {
            id: crypto.randomUUID(),
            accountId: ctx.accountId,
            amount: input.amount,
          };
          // Written through the guarded transaction: it commits with the stored result, or not at all.
          ctx.idempotency.tx.insert(payments).values(payment).run();
          return payment;
        },
      },
    },
  }),
  context: ({ request }) => ({ accountId: request.headers.get('x-account') ?? 'anonymous' }),
  plugins: [useIdempotency({ guard, scope: (ctx: { accountId: string }) => ctx.accountId })],
});
