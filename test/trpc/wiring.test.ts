/**
 * The wiring of the tRPC guide (docs/trpc.md), written out as a user would (on an in-memory
 * database, on a port of its own) and run over HTTP, so that the documentation cannot rot;
 * test/readme/complete-blocks.test.ts type-checks the page's block as it is.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTRPCClient, httpLink } from '@trpc/client';
import { initTRPC } from '@trpc/server';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import superjson from 'superjson';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createGuard } from '../../src/index.js';
import { openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import {
  assertIdempotencySetup,
  idempotency,
  idempotencyErrorFormatter,
} from '../../src/trpc/index.js';

// --- docs/trpc.md ----------------------------------------------------------------------
const payments = sqliteTable('payments', { amount: integer('amount').notNull() });
const db = openSqlite(':memory:');
db.run('create table if not exists payments (amount integer not null)');
const guard = createGuard({ store: sqliteStore(db), serializer: superjson });

interface Context {
  userId: string;
}
const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter: idempotencyErrorFormatter,
});

const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.userId });

const appRouter = assertIdempotencySetup(
  t.router({
    pay: t.procedure
      .input(z.object({ amount: z.number(), idempotencyKey: z.string().optional() }))
      .concat(guarded)
      .output(z.object({ amount: z.number(), at: z.date() }))
      .mutation(({ ctx, input }) => {
        ctx.idempotency.tx.insert(payments).values({ amount: input.amount }).run();
        return { amount: input.amount, at: new Date() };
      }),
  }),
);

// Stands in for your authentication: whose request this is.
const currentUser = (req: IncomingMessage) => String(req.headers['x-user'] ?? 'anonymous');
const server = createHTTPServer({
  router: appRouter,
  createContext: ({ req, res, info }) => ({ req, res, info, userId: currentUser(req) }),
});
// --- end of docs/trpc.md ---------------------------------------------------------------

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("S8/S9: the guide's server stores the row and the result together, and replays the result", async () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createTRPCClient<typeof appRouter>({
    links: [httpLink({ url, transformer: superjson })],
  });
  const first = await client.pay.mutate({ amount: 5, idempotencyKey: 'readme-1' });
  const again = await client.pay.mutate({ amount: 5, idempotencyKey: 'readme-1' });

  expect(again).toEqual(first);
  expect(again.at).toBeInstanceOf(Date);
  expect(db.select().from(payments).all()).toEqual([{ amount: 5 }]);
  await expect(client.pay.mutate({ amount: 5 })).rejects.toMatchObject({
    data: { httpStatus: 400, idempotencyCode: 'IDEMPOTENCY_KEY_MISSING' },
  });
});
