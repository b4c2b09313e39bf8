// A tRPC procedure guarded on the SQLite store, served by the fetch adapter: no port.
import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { sql } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createGuard } from 'mutation-guard';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';
import { idempotency, idempotencyErrorFormatter } from 'mutation-guard/trpc';
import { z } from 'zod';
import { expect } from './expect.js';

const payments = sqliteTable('payments', {
  id: text('id').primaryKey(),
  amount: integer('amount').notNull(),
});

interface Context {
  accountId: string;
}

/** The same call twice with one Idempotency-Key: it runs once, the second is a replay. */
export async function checkTrpc(): Promise<string> {
  const db = openSqlite(':memory:');
  db.run(sql`CREATE TABLE payments (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)`);
  const guard = createGuard({ store: sqliteStore(db) });
  const t = initTRPC.context<Context>().create({ errorFormatter: idempotencyErrorFormatter });
  const router = t.router({
    pay: t.procedure
      .input(z.object({ amount: z.number().int().positive() }))
      .concat(idempotency({ guard, scope: (ctx: Context) => ctx.accountId }))
      .mutation(({ ctx, input }) => {
        const payment = { id: crypto.randomUUID(), amount: input.amount };
        ctx.idempotency.tx.insert(payments).values(payment).run();
        return payment;
      }),
  });
  const send = () =>
    fetchRequestHandler({
      endpoint: '/trpc',
      router,
      req: new Request('http://app.test/trpc/pay', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-account': 'acct_1',
          'idempotency-key': 'trpc-order-1',
        },
        body: JSON.stringify({ amount: 700 }),
      }),
      createContext: ({ req, resHeaders, info }) => ({
        req,
        resHeaders,
        info,
        accountId: req.headers.get('x-account') ?? 'anonymous',
      }),
    });
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
  const count = db.select().from(payments).all().length;
  expect(count === 1, `${count} payments, expected 1`);
  return `tRPC (fetch adapter) + SQLite: ran once, replayed ${secondBody}`;
}
