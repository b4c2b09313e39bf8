// A GraphQL Yoga server guarded on the SQLite store (better-sqlite3, in memory), served
// through `yoga.fetch`: no port. Exports a way to send it requests and to count the payments.
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
import { expect } from './expect.js';

const payments = sqliteTable('payments', {
  id: text('id').primaryKey(),
  amount: integer('amount').notNull(),
});

interface Context {
  accountId: string;
  idempotency: IdempotencyContext<SqliteDatabase>;
}

export function createGraphqlServer() {
  const db = openSqlite(':memory:');
  db.run(sql`CREATE TABLE payments (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)`);
  const guard = createGuard({ store: sqliteStore(db) });
  const yoga = createYoga<{ accountId: string }>({
    schema: createSchema<Context>({
      typeDefs: [
        idempotentDirectiveTypeDefs,
        /* GraphQL */ `
          type Payment { id: ID!, amount: Int! }
          type Query { ping: String }
          type Mutation { pay(amount: Int!): Payment! @idempotent }
        `,
      ],
      resolvers: {
        Mutation: {
          pay: (_root, args: { amount: number }, ctx) => {
            const payment = { id: crypto.randomUUID(), amount: args.amount };
            ctx.idempotency.tx.insert(payments).values(payment).run();
            return payment;
          },
        },
      },
    }),
    context: ({ request }) => ({ accountId: request.headers.get('x-account') ?? 'anonymous' }),
    plugins: [useIdempotency({ guard, scope: (ctx: { accountId: string }) => ctx.accountId })],
  });
  return {
    fetch: (request: Request): Promise<Response> => Promise.resolve(yoga.fetch(request)),
    paymentCount: () => db.select().from(payments).all().length,
  };
}

export const PAY = {
  query: 'mutation Pay($amount: Int!) { pay(amount: $amount) { id amount } }',
  variables: { amount: 1250 },
};

/** The same mutation twice with one Idempotency-Key: it runs once, the second is a replay. */
export async function checkGraphql(): Promise<string> {
  const server = createGraphqlServer();
  const send = () =>
    server.fetch(
      new Request('http://app.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-account': 'acct_1',
          'idempotency-key': 'graphql-order-1',
        },
        body: JSON.stringify(PAY),
      }),
    );
  const first = await send();
  const firstBody = await first.text();
  expect(first.status === 200, `first answer: HTTP ${first.status} ${firstBody}`);
  expect(!first.headers.has('idempotent-replayed'), 'first answer says it was replayed');
  const second = await send();
  const secondBody = await second.text();
  expect(second.status === 200, `second answer: HTTP ${second.status} ${secondBody}`);
  expect(
    second.headers.get('idempotent-replayed') === 'true',
    'second answer lacks Idempotent-Replayed: true',
  );
  expect(secondBody === firstBody, `replay differs: ${firstBody} then ${secondBody}`);
  expect(server.paymentCount() === 1, `${server.paymentCount()} payments, expected 1`);
  return `GraphQL Yoga + SQLite: ran once, replayed ${secondBody}`;
}
