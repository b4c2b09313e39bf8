/**
 * The edges of a record's life, on every store: a key claimed afresh after its record
 * expired, a release that comes after its claim completed, and a lease-era original that is
 * still running when a guarded retry comes. Each rule here is one that a bug planted in the
 * Postgres store's SQL (`npm run mutate:sql`, scripts/sql-mutants) got past the rest of the
 * suite.
 */
import { expect, it } from 'vitest';
import { deferred } from '../support/deferred.js';
import { type Conformance, codeOf, PAST_LEASE, SHORT_LEASE, sleep } from './context.js';

export function describeEdgeRules<Tx>(ctx: Conformance<Tx>): void {
  const { call } = ctx;

  it('S6/S14: a key claimed afresh after its record expired belongs to the new request: its retry replays, the old request gets 422', async () => {
    const guard = ctx.guardFor();
    await guard.run(call('k1', async () => 'first', { retention: SHORT_LEASE }));
    await sleep(PAST_LEASE);
    expect(await guard.run(call('k1', async () => 'second', { fingerprint: 'fp-new' }))).toEqual({
      value: 'second',
      replayed: false,
    });
    let ran = false;
    const retry = await guard.run(
      call(
        'k1',
        async () => {
          ran = true;
          return 'third';
        },
        { fingerprint: 'fp-new' },
      ),
    );
    expect(retry).toEqual({ value: 'second', replayed: true });
    await expect(
      codeOf(
        guard.run(
          call('k1', async () => {
            ran = true;
            return 'old';
          }),
        ),
      ),
    ).resolves.toBe('IDEMPOTENCY_KEY_REUSED');
    expect(ran).toBe(false);
    expect(await ctx.store.read({ scope: 'acct_1', key: 'k1' })).toMatchObject({
      fingerprint: 'fp-new',
      state: 'complete',
    });
  });

  it('S8/S12: a release that comes after its claim completed (a commit whose answer was lost) frees nothing: the record stays and replays', async () => {
    const claim = await ctx.claimAsAnotherRequest();
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    const fence = { scope: 'acct_1', key: 'k1', token: claim.token };
    const completed = await ctx.store.transaction(fence, async (tx) => {
      await ctx.insertPayment(tx, 'p1');
      return ctx.store.complete(
        fence,
        { result: '"paid"', outcome: 'committed', retentionMs: 60_000 },
        tx,
      );
    });
    expect(completed).toBe(true);
    // The caller saw its commit fail and releases, as the guard does after a failure.
    expect(await ctx.store.release(fence)).toBe(false);
    expect(await ctx.store.read(fence)).toMatchObject({ state: 'complete', result: '"paid"' });
    let ran = false;
    const retry = await ctx.guardFor().run(
      call('k1', async () => {
        ran = true;
        return 'again';
      }),
    );
    expect(retry).toEqual({ value: 'paid', replayed: true });
    expect(ran).toBe(false);
    expect(await ctx.countPayments()).toBe(1);
  });

  it('S10/S11: while a lease-era original still runs past its lease, a guarded retry of the same request answers 409 at once and never runs', async () => {
    const claim = await ctx.claimAsAnotherRequest(SHORT_LEASE);
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    const fence = { scope: 'acct_1', key: 'k1', token: claim.token };
    const inside = deferred();
    const gate = deferred();
    const original = ctx.store.transaction(fence, async (tx) => {
      inside.resolve();
      await gate.promise;
      await ctx.insertPayment(tx, 'first');
      return ctx.store.complete(
        fence,
        { result: '"first"', outcome: 'committed', retentionMs: 60_000 },
        tx,
      );
    });
    let ran = false;
    try {
      await inside.promise;
      await sleep(PAST_LEASE);
      const retry = await Promise.race([
        codeOf(
          ctx.guardFor().run(
            call('k1', async () => {
              ran = true;
              return 'retry';
            }),
          ),
        ),
        sleep(3000).then(() => 'blocked'),
      ]);
      expect(retry).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(ran).toBe(false);
    } finally {
      // Let the original end even when an assertion failed, so teardown cannot hang.
      gate.resolve();
    }
    expect(await original).toBe(true);
    expect(await ctx.guardFor().run(call('k1', async () => 'late'))).toEqual({
      value: 'first',
      replayed: true,
    });
    expect(await ctx.countPayments()).toBe(1);
  });
}
