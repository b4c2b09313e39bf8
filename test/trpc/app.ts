/**
 * The tRPC app the tests run against, written the way the README tells users to: superjson
 * on both sides, the guard sharing it as serializer, `idempotency()` concatenated after
 * `.input()`, business writes through `ctx.idempotency.tx`.
 */
import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { z } from 'zod';
import type { Guard } from '../../src/index.js';
import { idempotency, idempotencyErrorFormatter } from '../../src/trpc/index.js';

/** Where the procedures' business rows go: a table per test file. */
export interface Ledger<Tx> {
  insert(tx: Tx, row: { key: string; path: string; amount: number }): Promise<void>;
  count(): Promise<number>;
}

export interface AppContext {
  userId: string;
  idempotencyKey?: string;
}

export interface AppOptions {
  /** How long `pay` holds its transaction, so that concurrent calls overlap. */
  delayMs?: number;
}

const payment = z.object({
  amount: z.number().int().positive(),
  note: z.string().optional(),
  idempotencyKey: z.string().optional(),
});

export function createApp<Tx>(guard: Guard<Tx>, ledger: Ledger<Tx>, options: AppOptions = {}) {
  const t = initTRPC.context<AppContext>().create({
    transformer: superjson,
    errorFormatter: idempotencyErrorFormatter,
  });
  const guarded = idempotency({
    guard,
    scope: (ctx: AppContext) => ctx.userId,
    isFinalError: (error) => error.code === 'PAYMENT_REQUIRED',
  });
  const optional = idempotency({ guard, scope: (ctx: AppContext) => ctx.userId, required: false });
  const runs = { pay: 0, refund: 0, failing: 0, optional: 0 };

  /** Writes a business row through the guarded transaction, then answers with rich types. */
  async function charge(
    path: keyof typeof runs,
    tx: Tx,
    key: string,
    input: z.infer<typeof payment>,
  ) {
    runs[path]++;
    await ledger.insert(tx, { key, path, amount: input.amount });
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    return {
      run: runs[path],
      amount: input.amount,
      at: new Date(),
      cents: BigInt(input.amount) * 10n ** 20n,
      tags: new Set(['paid', path]),
      meta: new Map<string, number>([['amount', input.amount]]),
    };
  }

  const router = t.router({
    pay: t.procedure
      .input(payment)
      .concat(guarded)
      .mutation(({ ctx, input }) => charge('pay', ctx.idempotency.tx, ctx.idempotency.key, input)),
    refund: t.procedure
      .input(payment)
      .concat(guarded)
      .mutation(({ ctx, input }) =>
        charge('refund', ctx.idempotency.tx, ctx.idempotency.key, input),
      ),
    /** Writes, then fails the way `input.mode` says. */
    failing: t.procedure
      .input(payment.extend({ mode: z.enum(['throw', 'trpc', 'decline', 'output']) }))
      .concat(guarded)
      .output(z.object({ ok: z.literal(true) }))
      .mutation(async ({ ctx, input }) => {
        await charge('failing', ctx.idempotency.tx, ctx.idempotency.key, input);
        if (input.mode === 'throw') throw new Error('boom');
        if (input.mode === 'trpc') throw new TRPCError({ code: 'PRECONDITION_FAILED' });
        if (input.mode === 'decline') {
          throw new TRPCError({ code: 'PAYMENT_REQUIRED', message: 'card declined' });
        }
        // Fails the `.output()` validator, which runs inside `next()`: `ok: false`, no throw.
        return { ok: false } as unknown as { ok: true };
      }),
    optional: t.procedure
      .input(payment)
      .concat(optional)
      .mutation(({ ctx }) => {
        runs.optional++;
        return { guarded: ctx.idempotency !== undefined, run: runs.optional };
      }),
    /** Concatenated before `.input()`: fingerprints the raw input (documented). */
    early: t.procedure
      .concat(guarded)
      .input(payment)
      .mutation(({ ctx, input }) => charge('pay', ctx.idempotency.tx, ctx.idempotency.key, input)),
    /** Not guarded at all. */
    unguarded: t.procedure.input(payment).mutation(({ input }) => ({ amount: input.amount })),
    /** A setup mistake: the middleware on a query. */
    lookup: t.procedure.concat(guarded).query(() => 'never'),
    runs: t.procedure.query(() => ({ ...runs })),
  });

  return { router, runs, t };
}

export type AppRouter = ReturnType<typeof createApp>['router'];
