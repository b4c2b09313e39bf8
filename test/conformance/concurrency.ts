/**
 * Calls fired at once (Promise.all), through one connection pool or two, on every store: a
 * key runs once however many callers race for it, and an expired result is never replayed
 * to a caller racing the one that runs afresh.
 */
import { expect, it } from 'vitest';
import { createGuard, type Guard, IdempotencyError } from '../../src/index.js';
import { type Conformance, sleep } from './context.js';

export function describeConcurrencyRules<Tx>(ctx: Conformance<Tx>): void {
  const { guardFor, call } = ctx;

  it('S14: concurrent retries after expiry never replay the expired result: one runs, the others are told it is in flight', async () => {
    // Several keys at once, so that the race between the replacing call and the others' reads is
    // tried many times in one go.
    const keys = Array.from({ length: 6 }, (_, i) => `expiring-${i}`);
    const guard = guardFor();
    await Promise.all(
      keys.map((key) => guard.run(call(key, async () => `old ${key}`, { retention: 200 }))),
    );
    await sleep(350);
    const runs = new Map<string, number>();
    const outcomes = await Promise.all(
      keys.flatMap((key) =>
        Array.from({ length: 8 }, () =>
          guard
            .run(
              call(
                key,
                async (tx) => {
                  runs.set(key, (runs.get(key) ?? 0) + 1);
                  await ctx.insertPayment(tx, key);
                  await sleep(20);
                  return `new ${key}`;
                },
                { retention: 60_000 },
              ),
            )
            .then((r) => ({ key, value: r.value, replayed: r.replayed }))
            .catch((e) => ({ key, code: IdempotencyError.is(e) ? e.code : String(e) })),
        ),
      ),
    );
    expect(outcomes.filter((o) => 'value' in o && o.value.startsWith('old'))).toEqual([]);
    expect(outcomes.filter((o) => 'code' in o && o.code !== 'IDEMPOTENCY_KEY_IN_USE')).toEqual([]);
    for (const key of keys) expect(runs.get(key), key).toBe(1);
    expect(await ctx.countPayments()).toBe(keys.length);
  });

  /**
   * Fires `count` identical calls at once (Promise.all), spread over `guards`, each writing
   * one business row; returns how the work ran and what each caller was answered.
   */
  async function fireIdentical(guards: Guard<Tx>[], key: string, count: number) {
    let runs = 0;
    const outcomes = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        guards[i % guards.length]!.run(
          call(key, async (tx) => {
            runs++;
            await ctx.insertPayment(tx, key);
            await sleep(20);
            return 'paid';
          }),
        )
          .then((r) => {
            // A replay answers with the first call's value, never another.
            if (r.value !== 'paid') return `unexpected value: ${String(r.value)}`;
            return r.replayed ? 'replayed' : 'fresh';
          })
          .catch((e) => (IdempotencyError.is(e) ? e.code : `unexpected: ${e}`)),
      ),
    );
    return { runs, outcomes };
  }
  const allowed = ['fresh', 'replayed', 'IDEMPOTENCY_KEY_IN_USE'];

  it('S7: 50 identical calls at once run the mutation exactly once; the rest replay or get 409', async () => {
    const { runs, outcomes } = await fireIdentical([guardFor()], 'storm', 50);
    expect(runs).toBe(1);
    expect(await ctx.countPayments()).toBe(1);
    expect(outcomes.filter((o) => o === 'fresh')).toHaveLength(1);
    expect(outcomes.every((o) => allowed.includes(o))).toBe(true);
  });

  it('S7: 100 distinct keys at once each run exactly once (over two connection pools where the store has them)', async () => {
    const guards = [guardFor()];
    if (!ctx.target.skipMultiConnection && ctx.secondStore) {
      guards.push(createGuard<Tx>({ store: await ctx.secondStore() }));
    }
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        guards[i % guards.length]!.run(
          call(`key-${i}`, async (tx) => {
            await sleep(2); // the transaction stays open across awaits
            await ctx.insertPayment(tx, `p${i}`);
            return i;
          }),
        ),
      ),
    );
    expect(results.every((r) => !r.replayed)).toBe(true);
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(await ctx.countPayments()).toBe(100);
    const records = await Promise.all(
      results.map((_, i) => ctx.store.read({ scope: 'acct_1', key: `key-${i}` })),
    );
    expect(records.every((record) => record?.outcome === 'committed')).toBe(true);
  });

  it.skipIf(Boolean(ctx.target.skipMultiConnection))(
    `S7: 60 identical calls at once through two connection pools run once${ctx.target.skipMultiConnection ? ` (skipped: ${ctx.target.skipMultiConnection})` : ''}`,
    async () => {
      if (!ctx.secondStore) throw new Error(`${ctx.target.name} has no second connection pool`);
      const guards = [guardFor(), createGuard<Tx>({ store: await ctx.secondStore() })];
      const { runs, outcomes } = await fireIdentical(guards, 'two-pools', 60);
      expect(runs).toBe(1);
      expect(await ctx.countPayments()).toBe(1);
      expect(outcomes.filter((o) => o === 'fresh')).toHaveLength(1);
      expect(outcomes.every((o) => allowed.includes(o))).toBe(true);
    },
  );
}
