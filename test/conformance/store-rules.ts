/**
 * The store's primitives called straight, as the guard calls them, on every store: what a
 * claim finds and takes, how the token fences completion and release, what a transaction
 * commits and rolls back, and how long a record stands.
 */
import { expect, it } from 'vitest';
import {
  type ClaimRequest,
  type CompletionRecord,
  type Fence,
  LeaseLostError,
} from '../../src/store/seam.js';
import { deferred } from '../support/deferred.js';
import { type Conformance, PAST_LEASE, SHORT_LEASE, sleep } from './context.js';

export function describeStoreRules<Tx>(ctx: Conformance<Tx>): void {
  const { claimAsAnotherRequest } = ctx;
  /** A claim of acct_1's `key`, fingerprint fp-a, a 30 s lease and a minute of retention. */
  const request = (key: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
    scope: 'acct_1',
    key,
    fingerprint: 'fp-a',
    operation: 'createPayment',
    leaseMs: 30_000,
    retentionMs: 60_000,
    ...overrides,
  });
  /** Claims `key` and returns its fence; the key must be free. */
  const claimed = async (key: string, overrides: Partial<ClaimRequest> = {}): Promise<Fence> => {
    const claim = await ctx.store.claim(request(key, overrides));
    if (claim.status !== 'claimed')
      throw new Error(`expected a claim of ${key}, got ${claim.status}`);
    return { scope: 'acct_1', key, token: claim.token };
  };
  const done = (result: string, overrides: Partial<CompletionRecord> = {}): CompletionRecord => ({
    result,
    outcome: 'committed',
    retentionMs: 60_000,
    ...overrides,
  });

  it("S7/S11: the first claim holds the key; a second sees the in-flight record, its lease and expiry on the store's clock", async () => {
    expect(await ctx.store.claim(request('k1'))).toMatchObject({
      status: 'claimed',
      takenOver: false,
    });
    const second = await ctx.store.claim(request('k1'));
    if (second.status !== 'exists') throw new Error(`expected the record, got ${second.status}`);
    expect(second.record).toMatchObject({
      scope: 'acct_1',
      key: 'k1',
      fingerprint: 'fp-a',
      operation: 'createPayment',
      state: 'in_flight',
      outcome: null,
      result: null,
    });
    // The lease runs from the claim, as the store's clock (readAt) tells it.
    const { leaseExpiresAt, expiresAt, createdAt, readAt } = second.record;
    const left = leaseExpiresAt!.getTime() - readAt.getTime();
    expect(left).toBeGreaterThan(25_000);
    expect(left).toBeLessThanOrEqual(30_000);
    expect(createdAt.getTime()).toBeLessThanOrEqual(readAt.getTime());
    // An in-flight record expires `leaseMs + retentionMs` after its claim (within the
    // millisecond a database timestamp rounds to).
    expect(Math.abs(expiresAt.getTime() - leaseExpiresAt!.getTime() - 60_000)).toBeLessThanOrEqual(
      1,
    );
  });

  it('S11/S8: an expired lease is taken over with a new token; the old fence can then neither run a transaction, complete nor release', async () => {
    const old = await claimed('k1', { leaseMs: SHORT_LEASE });
    await sleep(PAST_LEASE);
    const takeover = await ctx.store.claim(request('k1'));
    expect(takeover).toMatchObject({ status: 'claimed', takenOver: true });
    if (takeover.status !== 'claimed') return;
    expect(takeover.token).not.toBe(old.token);
    let ran = false;
    await expect(
      ctx.store.transaction(old, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(ran).toBe(false);
    expect(await ctx.store.complete(old, done('"late"'))).toBe(false);
    expect(await ctx.store.release(old)).toBe(false);
    expect(await ctx.store.read(old)).toMatchObject({ state: 'in_flight', result: null });
  });

  it('S8: complete and release change nothing for a token that does not hold the key; the right one releases, and then nothing completes', async () => {
    const fence = await claimed('k1');
    const wrong = { ...fence, token: 'not-the-token' };
    expect(await ctx.store.complete(wrong, done('"x"'))).toBe(false);
    expect(await ctx.store.release(wrong)).toBe(false);
    expect(await ctx.store.read(fence)).toMatchObject({ state: 'in_flight', result: null });
    expect(await ctx.store.release(fence)).toBe(true);
    expect(await ctx.store.read(fence)).toBeUndefined();
    expect(await ctx.store.complete(fence, done('"x"'))).toBe(false);
  });

  it('S8: business writes and the fenced completion commit together; a throw rolls both back and propagates unchanged', async () => {
    const fence = await claimed('k1');
    const value = await ctx.store.transaction(fence, async (tx) => {
      await ctx.insertPayment(tx, 'p1');
      expect(await ctx.store.complete(fence, done('"done"'), tx)).toBe(true);
      return 'done';
    });
    expect(value).toBe('done');
    expect(await ctx.countPayments()).toBe(1);
    expect(await ctx.store.read(fence)).toMatchObject({ state: 'complete', result: '"done"' });

    const failing = await claimed('k2');
    const failure = new Error('card declined');
    await expect(
      ctx.store.transaction(failing, async (tx) => {
        await ctx.insertPayment(tx, 'p2');
        await ctx.store.complete(failing, done('"done"'), tx);
        await sleep(5); // the transaction stays open across a real wait
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await ctx.countPayments()).toBe(1);
    expect(await ctx.store.read(failing)).toMatchObject({ state: 'in_flight', result: null });
  });

  it('S8: a completion whose token no longer matches rolls the whole transaction back', async () => {
    const claim = await claimAsAnotherRequest();
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const fence = { scope: 'acct_1', key: 'k1', token: claim.token };
    const stale = { ...fence, token: 'not-the-token' };
    const completion = { result: '"x"', outcome: 'committed' as const, retentionMs: 60_000 };
    const outcome = await ctx.store
      .transaction(fence, async (tx) => {
        await ctx.insertPayment(tx, 'p1');
        const ok = await ctx.store.complete(stale, completion, tx);
        if (!ok) throw new Error('fenced out');
        return 'committed';
      })
      .catch((e: Error) => e.message);
    expect(outcome).toBe('fenced out');
    expect(await ctx.countPayments()).toBe(0);
    expect(await ctx.store.release(stale)).toBe(false);
    expect((await ctx.store.read(fence))?.state).toBe('in_flight');
  });

  it('S6/S11: an in-flight claim whose lease expired (not past its expiry) is never claimed by another fingerprint, even by claims racing each other', async () => {
    const claim = (fingerprint: string, leaseMs = 1) =>
      ctx.store.claim({
        scope: 'acct_1',
        key: 'k1',
        fingerprint,
        operation: 'createPayment',
        leaseMs,
        retentionMs: 60_000,
      });
    expect((await claim('fp-a', SHORT_LEASE)).status).toBe('claimed');
    await sleep(PAST_LEASE);
    const other = await claim('fp-b');
    expect(other).toMatchObject({ status: 'exists', record: { fingerprint: 'fp-a' } });
    // Racing claims of both fingerprints over a record that anyone may claim (complete and
    // past retention), with leases of 1 ms: once one of them holds it, the record is that
    // fingerprint's in-flight claim until its expiry, so every claim that succeeds in a
    // round must carry the same fingerprint as the first.
    for (let round = 0; round < 5; round++) {
      const key = `race-${round}`;
      const first = await ctx.store.claim({
        scope: 'acct_1',
        key,
        fingerprint: 'fp-old',
        operation: 'createPayment',
        leaseMs: 30_000,
        retentionMs: 1,
      });
      if (first.status !== 'claimed') throw new Error('expected a claim');
      await ctx.store.complete(
        { scope: 'acct_1', key, token: first.token },
        { result: '"old"', outcome: 'committed', retentionMs: 1 },
      );
      await sleep(20);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => {
          const fingerprint = i % 2 === 0 ? 'fp-a' : 'fp-b';
          return ctx.store
            .claim({
              scope: 'acct_1',
              key,
              fingerprint,
              operation: 'createPayment',
              leaseMs: 1,
              retentionMs: 60_000,
            })
            .then((result) => ({ fingerprint, result }));
        }),
      );
      const winners = new Set(
        results.filter((r) => r.result.status === 'claimed').map((r) => r.fingerprint),
      );
      expect(winners.size, `round ${round}`).toBe(1);
    }
  });

  it('S9/S14: a complete record stands, with its outcome and result, until its retention ends; then a claim of any fingerprint takes it afresh', async () => {
    const kept = await claimed('kept');
    expect(await ctx.store.complete(kept, done('"kept"', { outcome: 'rolled_back' }))).toBe(true);
    const expiring = await claimed('expiring');
    expect(await ctx.store.complete(expiring, done('"old"', { retentionMs: 1 }))).toBe(true);
    await sleep(50);
    expect(await ctx.store.claim(request('kept'))).toMatchObject({
      status: 'exists',
      record: { state: 'complete', outcome: 'rolled_back', result: '"kept"', leaseExpiresAt: null },
    });
    expect(await ctx.store.claim(request('expiring', { fingerprint: 'fp-new' }))).toMatchObject({
      status: 'claimed',
      takenOver: false,
    });
    expect(await ctx.store.read(expiring)).toMatchObject({
      state: 'in_flight',
      fingerprint: 'fp-new',
      outcome: null,
      result: null,
    });
  });

  it('S10/S11: while the original transaction is open its key is never taken over, even after its lease ran out; a claim answers at once', async () => {
    const fence = await claimed('k1', { leaseMs: SHORT_LEASE });
    const inside = deferred();
    const gate = deferred();
    const original = ctx.store.transaction(fence, async (tx) => {
      inside.resolve();
      await gate.promise;
      await ctx.insertPayment(tx, 'first');
      return ctx.store.complete(fence, done('"first"'), tx);
    });
    try {
      await inside.promise;
      // The lease runs out while the transaction (which cannot end before the gate opens) holds
      // the key, so a claim that resolves below did not wait for it.
      await sleep(PAST_LEASE);
      const retry = await Promise.race([
        ctx.store.claim(request('k1')),
        sleep(3000).then(() => 'blocked' as const),
      ]);
      expect(retry).not.toBe('blocked');
      expect(retry).toMatchObject({ status: 'exists', record: { state: 'in_flight' } });
      gate.resolve();
      expect(await original).toBe(true);
      expect(await ctx.countPayments()).toBe(1);
      expect(await ctx.store.claim(request('k1'))).toMatchObject({
        status: 'exists',
        record: { state: 'complete', result: '"first"' },
      });
    } finally {
      // Let the original end even when an assertion failed, so teardown cannot hang.
      gate.resolve();
      await original.catch(() => {});
    }
  });

  it('S14: purge refuses a batch size below 1 or a fraction, and a batch count that is not a positive integer, before deleting anything', async () => {
    for (const options of [
      { batchSize: 0, maxBatches: 1 },
      { batchSize: 1.5, maxBatches: 1 },
      { batchSize: 10, maxBatches: 0 },
    ]) {
      await expect(ctx.store.purge(options)).rejects.toThrow(TypeError);
    }
  });
}
