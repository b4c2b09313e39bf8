/**
 * The fingerprint through a real tRPC caller (SPEC S5, S6): a retry is recognised by what it
 * asks for, not by how its values happen to be laid out in memory. `createCaller` hands the
 * input to the procedure as built, so holes and Map insertion order reach the guard intact.
 */
import { initTRPC } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idempotency } from '../../src/trpc/index.js';
import type { AppContext } from './app.js';
import { sqliteGuard } from './sqlite.js';

function setup() {
  const sqlite = sqliteGuard();
  const t = initTRPC.context<AppContext>().create();
  const guarded = idempotency({ guard: sqlite.guard, scope: (ctx: AppContext) => ctx.userId });
  const runs = { keep: 0 };
  const router = t.router({
    keep: t.procedure
      .input(z.object({ data: z.unknown(), idempotencyKey: z.string().optional() }))
      .concat(guarded)
      .mutation(() => ++runs.keep),
  });
  const caller = t.createCallerFactory(router)({ userId: 'alice' });
  const keep = (data: unknown, idempotencyKey: string) =>
    caller.keep({ data, idempotencyKey }).catch((error: unknown) => error as { code: string });
  return { keep, runs };
}

describe('fingerprints through createCaller (SPEC S5, S6)', () => {
  it('S6: [,] after [] with the same key answers 422 and runs nothing', async () => {
    const { keep, runs } = setup();
    expect(await keep([], 'k-hole')).toBe(1);
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(await keep([,], 'k-hole')).toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    expect(await keep([undefined], 'k-hole')).toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    expect(runs.keep).toBe(1);
  });

  it('S5: a retry that rebuilds an equal Map in another order replays', async () => {
    const { keep, runs } = setup();
    // Keys that are equal objects but not the same object encode alike.
    const map = () =>
      new Map<object, string>([
        [{ sku: 'a' }, 'first'],
        [{ sku: 'a' }, 'second'],
      ]);
    expect(await keep(map(), 'k-map')).toBe(1);
    expect(await keep(new Map([...map()].reverse()), 'k-map')).toBe(1);
    expect(runs.keep).toBe(1);
  });
});
