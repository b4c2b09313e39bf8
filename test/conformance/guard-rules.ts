/**
 * The rules end to end through the real guard, on every store: what a first call, a retry, a
 * duplicate, a failure, expiry and purge do to the business rows and the record.
 */
import { expect, it } from 'vitest';
import { createGuard, IdempotencyError, rollback } from '../../src/index.js';
import { type Conformance, codeOf, PAST_RETENTION, SHORT_RETENTION, sleep } from './context.js';

export function describeGuardRules<Tx>(ctx: Conformance<Tx>): void {
  const { guardFor, call, holdAsAnotherRequest } = ctx;

  it('S7/S8: a first call claims the key, runs once, and commits its business row with the result', async () => {
    const guard = guardFor();
    const result = await guard.run(
      call('k1', async (tx) => {
        await ctx.insertPayment(tx, 'p1');
        return { id: 'p1' };
      }),
    );
    expect(result).toEqual({ value: { id: 'p1' }, replayed: false });
    expect(await ctx.countPayments()).toBe(1);
    const record = await ctx.store.read({ scope: 'acct_1', key: 'k1' });
    expect(record?.outcome).toBe('committed');
    expect(ctx.events.map((e) => e.type)).toEqual(['claimed', 'completed']);
  });

  it('S9: a retry replays the stored result without running the work, Date/BigInt/Map/Set intact', async () => {
    const guard = guardFor();
    let runs = 0;
    const value = {
      at: new Date('2026-01-02T03:04:05.678Z'),
      big: 2n ** 70n,
      map: new Map([['a', 1]]),
      set: new Set(['x']),
      nested: [undefined, null, 1.5],
    };
    const work = async (tx: Tx) => {
      runs++;
      await ctx.insertPayment(tx, `p${runs}`);
      return value;
    };
    const first = await guard.run(call('k1', work));
    const second = await guard.run(call('k1', work));
    expect(runs).toBe(1);
    expect(second.replayed).toBe(true);
    expect(second.value).toEqual(first.value);
    expect(second.value.big).toBe(2n ** 70n);
    expect(second.value.at).toBeInstanceOf(Date);
    expect(await ctx.countPayments()).toBe(1);
  });

  it('S6: the same key with another fingerprint on a complete record is 422 and leaves the record untouched', async () => {
    const guard = guardFor();
    await guard.run(call('k1', async () => 'first'));
    await expect(
      codeOf(guard.run(call('k1', async () => 'other', { fingerprint: 'fp-b' }))),
    ).resolves.toBe('IDEMPOTENCY_KEY_REUSED');
    const replay = await guard.run(call('k1', async () => 'never'));
    expect(replay).toEqual({ value: 'first', replayed: true });
    expect(ctx.events.map((e) => e.type)).toContain('reused');
  });

  it('S10/S6: a key in flight answers 409 with Retry-After for the same request, 422 for another', async () => {
    const held = await holdAsAnotherRequest();
    const guard = guardFor();
    let ran = false;
    const inUse = await guard.run(call('k1', async () => (ran = true))).catch((e) => e);
    expect(IdempotencyError.is(inUse) && inUse.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(inUse.status).toBe(409);
    expect(inUse.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(inUse.retryAfterSeconds).toBeLessThanOrEqual(30);
    await expect(
      codeOf(guard.run(call('k1', async () => (ran = true), { fingerprint: 'fp-b' }))),
    ).resolves.toBe('IDEMPOTENCY_KEY_REUSED');
    expect(ran).toBe(false);
    expect(await held.finish()).toEqual({ value: 'held', replayed: false });
  });

  it('S12: a throwing mutation rolls back its rows, frees the key, and a retry runs afresh', async () => {
    const guard = guardFor();
    let runs = 0;
    const failing = guard.run(
      call('k1', async (tx) => {
        runs++;
        await ctx.insertPayment(tx, 'p1');
        throw new Error('card processor timed out');
      }),
    );
    await expect(failing).rejects.toThrow('card processor timed out');
    expect(await ctx.countPayments()).toBe(0);
    expect(await ctx.store.read({ scope: 'acct_1', key: 'k1' })).toBeUndefined();
    const retry = await guard.run(
      call('k1', async (tx) => {
        runs++;
        await ctx.insertPayment(tx, 'p1');
        return 'ok';
      }),
    );
    expect(retry).toEqual({ value: 'ok', replayed: false });
    expect(runs).toBe(2);
    expect(await ctx.countPayments()).toBe(1);
    expect(ctx.events.map((e) => e.type)).toContain('released');
  });

  it('S12: rollback(value) answers without storing; rollback(value, { keep }) stores a final error and replays it', async () => {
    const guard = guardFor();
    const soft = await guard.run(
      call('k1', async (tx) => {
        await ctx.insertPayment(tx, 'p1');
        return rollback({ error: 'try again' });
      }),
    );
    expect(soft).toEqual({ value: { error: 'try again' }, replayed: false });
    expect(await ctx.store.read({ scope: 'acct_1', key: 'k1' })).toBeUndefined();

    const declined = await guard.run(
      call('k2', async (tx) => {
        await ctx.insertPayment(tx, 'p2');
        return rollback({ error: 'card declined' }, { keep: true });
      }),
    );
    expect(declined).toEqual({ value: { error: 'card declined' }, replayed: false });
    expect(await ctx.countPayments()).toBe(0);
    const record = await ctx.store.read({ scope: 'acct_1', key: 'k2' });
    expect(record?.outcome).toBe('rolled_back');
    expect(await guard.run(call('k2', async () => 'never'))).toEqual({
      value: { error: 'card declined' },
      replayed: true,
    });
  });

  it('S14: a complete record past its retention counts as absent, and purge deletes it', async () => {
    const guard = guardFor();
    await guard.run(call('old', async () => 'first', { retention: SHORT_RETENTION }));
    await guard.run(call('fresh', async () => 'kept'));
    await sleep(PAST_RETENTION);
    const again = await guard.run(
      call('old', async () => 'second', { fingerprint: 'fp-new', retention: SHORT_RETENTION }),
    );
    expect(again).toEqual({ value: 'second', replayed: false });
    await sleep(PAST_RETENTION);
    expect(await guard.purge({ batchSize: 1 })).toBe(1);
    expect(await ctx.store.read({ scope: 'acct_1', key: 'old' })).toBeUndefined();
    expect(await ctx.store.read({ scope: 'acct_1', key: 'fresh' })).toMatchObject({
      result: '"kept"',
    });
    expect(ctx.events.find((e) => e.type === 'purged')?.count).toBe(1);
  });

  it('S14: purge deletes only expired records, in bounded batches, and says how many', async () => {
    const guard = guardFor();
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        guard.run(call(`k${i}`, async () => i, { retention: 50 })),
      ),
    );
    await guard.run(call('fresh', async () => 'kept'));
    await sleep(200);
    expect(await guard.purge({ batchSize: 3, maxBatches: 2 })).toBe(6);
    expect(await guard.purge({ batchSize: 3 })).toBe(1);
    expect(await guard.purge()).toBe(0);
    expect(await ctx.store.read({ scope: 'acct_1', key: 'k0' })).toBeUndefined();
    expect(await ctx.store.read({ scope: 'acct_1', key: 'fresh' })).toMatchObject({
      result: '"kept"',
    });
  });

  it('S16: a result over the size cap rolls back, stores nothing and says so', async () => {
    const guard = guardFor({ maxResultBytes: 64 });
    const outcome = guard.run(
      call('k1', async (tx) => {
        await ctx.insertPayment(tx, 'p1');
        return 'x'.repeat(100);
      }),
    );
    await expect(codeOf(outcome)).resolves.toBe('IDEMPOTENCY_RESULT_TOO_LARGE');
    expect(await ctx.countPayments()).toBe(0);
    expect(await ctx.store.read({ scope: 'acct_1', key: 'k1' })).toBeUndefined();
  });

  it('S15: a store that cannot be reached fails closed with 503 and never runs the mutation', async () => {
    const broken = await ctx.target.unreachable();
    try {
      let ran = false;
      const guard = createGuard<Tx>({ store: broken.store });
      const error = await guard.run(call('k1', async () => (ran = true))).catch((e) => e);
      expect(IdempotencyError.is(error) && error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      expect(error.status).toBe(503);
      expect(ran).toBe(false);
    } finally {
      await broken.close();
    }
  });

  it('S4: the same key in two scopes never replays, blocks or rejects across', async () => {
    // A key held in flight in one scope is free in another: never 409 or 422 (on SQLite the
    // call queues behind the held transaction, as any write does, S23).
    const held = await holdAsAnotherRequest({ scope: 'acct_a', key: 'held' });
    const guard = guardFor();
    const other = guard.run(call('held', async () => 'b', { scope: 'acct_b' }));
    await sleep(50);
    await held.finish();
    expect(await other).toEqual({ value: 'b', replayed: false });
    const a = await guard.run(call('shared', async () => 'for a', { scope: 'acct_a' }));
    const b = await guard.run(
      call('shared', async () => 'for b', { scope: 'acct_b', fingerprint: 'fp-other' }),
    );
    expect(a).toEqual({ value: 'for a', replayed: false });
    expect(b).toEqual({ value: 'for b', replayed: false });
  });

  it('S10: with `wait`, a duplicate waits for the first to finish and replays its result', async () => {
    const held = await holdAsAnotherRequest({ value: { id: 'first' } });
    setTimeout(() => void held.finish(), 150);
    const waited = await guardFor({ wait: 3_000 }).run(call('k1', async () => ({ id: 'second' })));
    expect(waited).toEqual({ value: { id: 'first' }, replayed: true });
  });

  it('S25/S26: events carry durations and a key hash, never the raw key', async () => {
    const guard = guardFor();
    const key = 'secret-key-0123456789';
    await guard.run(call(key, async () => 'v'));
    await guard.run(call(key, async () => 'v'));
    await guard.run(call(key, async () => 'v', { fingerprint: 'fp-b' })).catch(() => {});
    expect(ctx.events.map((e) => e.type)).toEqual(['claimed', 'completed', 'replayed', 'reused']);
    for (const event of ctx.events) {
      expect(event.operation).toBe('createPayment');
      expect(event.keyHash).toMatch(/^[0-9a-f]{12}$/);
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(JSON.stringify(ctx.events)).not.toContain(key);
  });
}
