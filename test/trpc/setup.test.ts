/**
 * Setup mistakes are refused clearly, never answered as outages or half-run (SPEC S8, S12,
 * S15, S17): the guard on a query, an `.output()` validator before the guard, a scope that
 * is not a string.
 */
import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertIdempotencySetup, idempotency } from '../../src/trpc/index.js';
import type { AppContext } from './app.js';
import { rawMutation, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const sqlite = sqliteGuard();
const t = initTRPC.context<AppContext>().create({ transformer: superjson });
const guarded = idempotency({ guard: sqlite.guard, scope: (ctx: AppContext) => ctx.userId });
const input = z.object({ amount: z.number(), idempotencyKey: z.string().optional() });
// The resolver returns what the output schema refuses for amounts over 100.
const output = z.object({ amount: z.number().max(100) });
const runs = { before: 0, after: 0 };

const router = t.router({
  outputBefore: t.procedure
    .input(input)
    .output(output)
    .concat(guarded)
    .mutation(async ({ ctx, input }) => {
      runs.before++;
      await sqlite.ledger.insert(ctx.idempotency.tx, {
        key: ctx.idempotency.key,
        path: 'before',
        amount: input.amount,
      });
      return { amount: input.amount };
    }),
  outputAfter: t.procedure
    .input(input)
    .concat(guarded)
    .output(output)
    .mutation(async ({ ctx, input }) => {
      runs.after++;
      await sqlite.ledger.insert(ctx.idempotency.tx, {
        key: ctx.idempotency.key,
        path: 'after',
        amount: input.amount,
      });
      return { amount: input.amount };
    }),
  lookup: t.procedure.concat(guarded).query(() => 'never'),
});

// Not guarded, validates its output, and calls the guarded `outputAfter` from its resolver:
// the inner call runs inside the outer validator's `next()`, yet is ordered rightly.
const outerRouter = t.router({
  outer: t.procedure
    .input(input)
    .output(output)
    .mutation(({ ctx, input }) => t.createCallerFactory(router)(ctx).outputAfter(input)),
});

const served: Promise<Served> = serve(router);
afterAll(async () => (await served).close());

async function call(path: string, amount: number, key: string) {
  const response = await rawMutation(
    (await served).url,
    path,
    { amount },
    {
      'Idempotency-Key': key,
    },
  );
  const body = (await response.json()) as { error?: { json: { message: string } } };
  return { status: response.status, message: body.error?.json.message };
}

describe('.output() and the guard (SPEC S8, S12)', () => {
  it('S8/S12: .output() before .concat(idempotency()) is refused over HTTP before anything runs or is stored', async () => {
    const rows = await sqlite.ledger.count();
    for (const amount of [5, 500]) {
      const key = `k-before-${amount}`;
      const { status, message } = await call('outputBefore', amount, key);
      expect(status).toBe(500);
      expect(message).toMatch(/"outputBefore" has \.output\(\) before \.concat\(idempotency/);
      expect(await sqlite.store.read({ scope: 'alice', key })).toBeUndefined();
    }
    expect(runs.before).toBe(0);
    expect(await sqlite.ledger.count()).toBe(rows);
  });

  it('S8/S12: .output() after .concat(idempotency()) validates inside the guard: a failure rolls back and frees the key', async () => {
    const rows = await sqlite.ledger.count();
    const failed = await call('outputAfter', 500, 'k-after-bad');
    expect(failed.status).toBe(500);
    expect(failed.message).toBe('Output validation failed');
    expect(await sqlite.store.read({ scope: 'alice', key: 'k-after-bad' })).toBeUndefined();
    expect(await sqlite.ledger.count()).toBe(rows);

    const ok = await call('outputAfter', 5, 'k-after-ok');
    expect(ok.status).toBe(200);
    expect(await sqlite.ledger.count()).toBe(rows + 1);
    expect((await sqlite.store.read({ scope: 'alice', key: 'k-after-ok' }))?.outcome).toBe(
      'committed',
    );
  });
});

describe('.output() and the guard through createCaller, the router never checked (SPEC S8, S12)', () => {
  const caller = t.createCallerFactory(router)({ userId: 'alice' });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: { code?: string; message?: string }) => ({
        code: error.code,
        message: error.message,
      }),
    );

  it('S8/S12: .output() before .concat(idempotency()) is refused on every call before anything runs or is stored', async () => {
    const rows = await sqlite.ledger.count();
    for (const amount of [5, 500, 500]) {
      const key = `k-caller-before-${amount}`;
      const refused = await refusal(caller.outputBefore({ amount, idempotencyKey: key }));
      expect(refused?.code).toBe('INTERNAL_SERVER_ERROR');
      expect(refused?.message).toMatch(
        /"outputBefore" has \.output\(\) before \.concat\(idempotency/,
      );
      expect(await sqlite.store.read({ scope: 'alice', key })).toBeUndefined();
    }
    expect(runs.before).toBe(0);
    expect(await sqlite.ledger.count()).toBe(rows);
  });

  it('S8/S12: .output() after .concat(idempotency()) runs, also called from inside a procedure that validates its output', async () => {
    const rows = await sqlite.ledger.count();
    expect(await caller.outputAfter({ amount: 5, idempotencyKey: 'k-caller-after' })).toEqual({
      amount: 5,
    });
    const outer = t.createCallerFactory(outerRouter)({ userId: 'alice' });
    expect(await outer.outer({ amount: 6, idempotencyKey: 'k-caller-outer' })).toEqual({
      amount: 6,
    });
    expect(await sqlite.ledger.count()).toBe(rows + 2);
    const failed = await refusal(caller.outputAfter({ amount: 500, idempotencyKey: 'k-c-bad' }));
    expect(failed?.message).toBe('Output validation failed');
    expect(await sqlite.store.read({ scope: 'alice', key: 'k-c-bad' })).toBeUndefined();
    expect(await sqlite.ledger.count()).toBe(rows + 2);
  });
});

describe('assertIdempotencySetup (SPEC S17: only mutations are guarded)', () => {
  it('S17: throws where the router is built, naming a guarded query and an .output() before the guard', () => {
    expect(() => assertIdempotencySetup(router)).toThrow(TypeError);
    let message = '';
    try {
      assertIdempotencySetup(router);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/"lookup" is a query/);
    expect(message).toMatch(/"outputBefore" has \.output\(\) before/);
    expect(message).not.toMatch(/outputAfter/);
  });

  it('S17: returns a correctly built router unchanged, nested routers included', () => {
    const good = t.router({
      pay: t.procedure
        .input(input)
        .concat(guarded)
        .output(output)
        .mutation(() => ({ amount: 1 })),
      nested: t.router({ refund: t.procedure.concat(guarded).mutation(() => 1) }),
      list: t.procedure.query(() => []),
    });
    expect(assertIdempotencySetup(good)).toBe(good);
    const bad = t.router({
      nested: t.router({ find: t.procedure.concat(guarded).query(() => 1) }),
    });
    expect(() => assertIdempotencySetup(bad)).toThrow(/"nested\.find" is a query/);
  });
});

describe('scope (SPEC S4, S15)', () => {
  it.each([
    ['undefined', undefined],
    ['a number', 42],
  ])(
    'S4/S15: a scope option returning %s is a setup error naming the option, not 503; nothing runs',
    async (_, value) => {
      let ran = 0;
      const bad = idempotency({
        guard: sqlite.guard,
        scope: () => value as unknown as string,
      });
      const local = t.router({
        pay: t.procedure
          .input(input)
          .concat(bad)
          .mutation(() => ++ran),
      });
      const caller = local.createCaller({ userId: 'alice' });
      const error = await caller
        .pay({ amount: 1, idempotencyKey: `k-scope-${typeof value}` })
        .catch((e) => e);
      expect(error.code).toBe('INTERNAL_SERVER_ERROR');
      expect(error.message).toMatch(/`scope` option must return a string, but it returned/);
      expect(ran).toBe(0);
      const key = `k-scope-${typeof value}`;
      expect(await sqlite.store.read({ scope: String(value), key })).toBeUndefined();
    },
  );
});
