import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { sql } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createGuard } from 'mutation-guard';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';
import { idempotency, idempotencyErrorFormatter } from 'mutation-guard/trpc';
import superjson from 'superjson';
import { z } from 'zod';

const payments = sqliteTable('payments', {
  id: text('id').primaryKey(),
  amount: integer('amount').notNull(),
});
const db = openSqlite(':memory:');
db.run(sql`CREATE TABLE payments (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)`);

// Share the app's transformer, so Dates, BigInts, Maps and Sets replay as they went out.
const guard = createGuard({ store: sqliteStore(db), serializer: superjson });

interface Context {
  accountId: string;
}
const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter: idempotencyErrorFormatter, // adds data.idempotencyCode for clients
});
const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.accountId });

export const appRouter = t.router({
  pay: t.procedure
    .input(z.object({ amount: z.number().int().positive(), idempotencyKey: z.string().optional() }))
    .concat(guarded) // after .input(): the fingerprint covers the validated input
    .mutation(({ ctx, input }) => {
      const payment = { id: crypto.randomUUID(), amount: input.amount, at: new Date() };
      ctx.idempotency.tx.insert(payments).values(payment).run();
      return payment;
    }),
});

/** Serve with any adapter; this is the fetch one. */
export const handle = (req: Request) =>
  fetchRequestHandler({
    endpoint: '/trpc',
    req,
    router: appRouter,
    // `req` carries the Idempotency-Key header, `resHeaders` gets Idempotent-Replayed and
    // Retry-After, `info` lets the middleware refuse ambiguous batches.
    createContext: ({ req, resHeaders, info }) => ({
      req,
      resHeaders,
      info,
      accountId: req.headers.get('x-account') ?? 'anonymous',
    }),
  });
