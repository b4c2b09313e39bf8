/**
 * The store's `claimAndRun` called straight, as the guard calls it, on every store: what it
 * runs and writes, what it answers for a key that is held or has a record, what rolls back,
 * and how long a record stands.
 */
import { expect, it } from 'vitest';
import type { ClaimRequest, CompletionRecord, WorkEnding } from '../../src/store/seam.js';
import { deferred } from '../support/deferred.js';
import { type Conformance, PAST_RETENTION, SHORT_RETENTION, sleep } from './context.js';

export function describeStoreRules<Tx>(ctx: Conformance<Tx>): void {
  /** A claim of acct_1's `key`, fingerprint fp-a. */
  const request = (key: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
    scope: 'acct_1',
    key,
    fingerprint: 'fp-a',
    operation: 'createPayment',
    ...overrides,
  });
  const done = (result: string, overrides: Partial<CompletionRecord> = {}): CompletionRecord => ({
    result,
    outcome: 'committed',
    retentionMs: 60_000,
    ...overrides,
  });
  /** Work that writes one business row and ends with `completion`. */
  const paying =
    (id: string, completion = done(`"${id}"`)) =>
    async (tx: Tx): Promise<WorkEnding<string>> => {
      await ctx.insertPayment(tx, id);
      return { value: id, completion };
    };
  const never = async (): Promise<WorkEnding<string>> => {
    throw new Error('the work must not run');
  };

  it("S7/S8/S11: a free key runs the work once; its record is written complete with its writes, dated on the store's clock; a second call finds it", async () => {
    expect(await ctx.store.claimAndRun(request('k1'), paying('p1'))).toEqual({
      status: 'done',
      value: 'p1',
    });
    expect(await ctx.countPayments()).toBe(1);
    const second = await ctx.store.claimAndRun(request('k1'), never);
    if (second.status !== 'exists') throw new Error(`expected the record, got ${second.status}`);
    expect(second.record).toMatchObject({
      scope: 'acct_1',
      key: 'k1',
      fingerprint: 'fp-a',
      operation: 'createPayment',
      outcome: 'committed',
      result: '"p1"',
    });
    // The retention runs from the completion, as the store's clock (readAt) tells it.
    const { expiresAt, createdAt, readAt } = second.record;
    const left = expiresAt.getTime() - readAt.getTime();
    expect(left).toBeGreaterThan(55_000);
    expect(left).toBeLessThanOrEqual(60_000);
    expect(createdAt.getTime()).toBeLessThanOrEqual(readAt.getTime());
    expect(await ctx.store.read(request('k1'))).toMatchObject({ result: '"p1"' });
  });

  it('S8/S12: work that throws rolls its writes back, writes nothing and propagates unchanged; the key is free again', async () => {
    const failure = new Error('card declined');
    await expect(
      ctx.store.claimAndRun(request('k1'), async (tx) => {
        await ctx.insertPayment(tx, 'p1');
        await sleep(5); // the transaction stays open across a real wait
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await ctx.countPayments()).toBe(0);
    expect(await ctx.store.read(request('k1'))).toBeUndefined();
    expect(await ctx.store.claimAndRun(request('k1'), paying('p2'))).toEqual({
      status: 'done',
      value: 'p2',
    });
    expect(await ctx.countPayments()).toBe(1);
  });

  it("S12: a rolled_back ending rolls the work's writes back and commits its record in the same transaction", async () => {
    const kept = done('"declined"', { outcome: 'rolled_back' });
    expect(await ctx.store.claimAndRun(request('k1'), paying('p1', kept))).toEqual({
      status: 'done',
      value: 'p1',
    });
    expect(await ctx.countPayments()).toBe(0);
    expect(await ctx.store.read(request('k1'))).toMatchObject({
      outcome: 'rolled_back',
      result: '"declined"',
    });
  });

  it('S6/S10/S11: while its transaction is open the key is held: a call answers at once, in flight for the same request or another, without running; then the record', async () => {
    const inside = deferred();
    const gate = deferred();
    const original = ctx.store.claimAndRun(request('k1'), async (tx) => {
      inside.resolve();
      await gate.promise;
      return paying('first')(tx);
    });
    try {
      await inside.promise;
      const answers = await Promise.race([
        Promise.all([
          ctx.store.claimAndRun(request('k1'), never),
          ctx.store.claimAndRun(request('k1', { fingerprint: 'fp-b' }), never),
        ]),
        sleep(3000).then(() => 'blocked' as const),
      ]);
      expect(answers).not.toBe('blocked');
      expect(answers).toEqual([
        expect.objectContaining({ status: 'in_flight', sameRequest: true }),
        expect.objectContaining({ status: 'in_flight', sameRequest: false }),
      ]);
      gate.resolve();
      expect(await original).toEqual({ status: 'done', value: 'first' });
      expect(await ctx.countPayments()).toBe(1);
      expect(await ctx.store.claimAndRun(request('k1'), never)).toMatchObject({
        status: 'exists',
        record: { result: '"first"' },
      });
    } finally {
      // Let the original end even when an assertion failed, so teardown cannot hang.
      gate.resolve();
      await original.catch(() => {});
    }
  });

  it('S9/S14: a record stands, with its outcome and result, until its retention ends; then a call of any fingerprint replaces it', async () => {
    const short = done('"old"', { retentionMs: SHORT_RETENTION });
    await ctx.store.claimAndRun(request('expiring'), paying('p1', short));
    expect(await ctx.store.claimAndRun(request('expiring'), never)).toMatchObject({
      status: 'exists',
      record: { outcome: 'committed', result: '"old"' },
    });
    await sleep(PAST_RETENTION);
    expect(
      await ctx.store.claimAndRun(request('expiring', { fingerprint: 'fp-new' }), paying('p2')),
    ).toEqual({ status: 'done', value: 'p2' });
    expect(await ctx.store.read(request('expiring'))).toMatchObject({
      fingerprint: 'fp-new',
      result: '"p2"',
    });
    expect(await ctx.countPayments()).toBe(2);
  });

  it('S7/S14: calls of two fingerprints racing for an expired record: exactly one runs its work', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `race-${round}`;
      await ctx.store.claimAndRun(
        request(key),
        paying(`old-${round}`, done('"old"', { retentionMs: 1 })),
      );
      await sleep(20);
      let runs = 0;
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          ctx.store.claimAndRun(
            request(key, { fingerprint: i % 2 === 0 ? 'fp-a' : 'fp-b' }),
            async (tx) => {
              runs++;
              return paying(`new-${round}-${i}`)(tx);
            },
          ),
        ),
      );
      expect(runs, `round ${round}`).toBe(1);
      expect(
        results.filter((r) => r.status === 'done'),
        `round ${round}`,
      ).toHaveLength(1);
    }
    expect(await ctx.countPayments()).toBe(10);
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
