import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { type IdempotencyStore, LeaseLostError, type StoreExtras } from '../../src/store.js';
import {
  businessIds,
  deferred,
  insertBusiness,
  KINDS,
  manualClock,
  openTestDatabase,
  type TestDatabase,
} from './helpers.js';

const LEASE = 1_000;
const RETENTION = 60_000;
const request = (key: string, fingerprint = 'fp-1', scope = 'tenant-a') => ({
  scope,
  key,
  fingerprint,
  operation: 'createPayment',
  leaseMs: LEASE,
  retentionMs: RETENTION,
});
const completion = (result: string) => ({
  result,
  outcome: 'committed' as const,
  retentionMs: RETENTION,
});

describe.each(KINDS)('sqliteStore primitives (%s database)', (kind) => {
  let test: TestDatabase;
  let db: SqliteDatabase;
  let clock: ReturnType<typeof manualClock>;
  let store: IdempotencyStore<SqliteDatabase> & StoreExtras;

  beforeEach(() => {
    test = openTestDatabase(kind);
    db = test.db;
    clock = manualClock();
    store = sqliteStore(db, { now: clock.now });
  });
  afterEach(() => test.close());

  async function claimToken(key: string, fingerprint = 'fp-1'): Promise<string> {
    const claim = await store.claim(request(key, fingerprint));
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    return claim.token;
  }

  it('S7: the first claim wins and a second sees the in-flight record', async () => {
    const first = await store.claim(request('k1'));
    expect(first).toMatchObject({ status: 'claimed', takenOver: false });
    clock.advance(10);
    const second = await store.claim(request('k1'));
    expect(second.status).toBe('exists');
    if (second.status !== 'exists') return;
    expect(second.record).toMatchObject({ scope: 'tenant-a', key: 'k1', state: 'in_flight' });
    expect(second.record.readAt.getTime()).toBe(clock.now());
    expect(second.record.leaseExpiresAt?.getTime()).toBe(clock.now() - 10 + LEASE);
    expect(second.record.expiresAt.getTime()).toBe(clock.now() - 10 + LEASE + RETENTION);
  });

  it('S4: the same key in another scope is a separate record', async () => {
    await claimToken('k1');
    const other = await store.claim(request('k1', 'fp-1', 'tenant-b'));
    expect(other.status).toBe('claimed');
  });

  it('S11: an expired lease is taken over with a new token, a live one is not', async () => {
    const token = await claimToken('k1');
    clock.advance(LEASE - 1);
    expect((await store.claim(request('k1'))).status).toBe('exists');
    clock.advance(1);
    const takeover = await store.claim(request('k1'));
    expect(takeover).toMatchObject({ status: 'claimed', takenOver: true });
    if (takeover.status === 'claimed') expect(takeover.token).not.toBe(token);
  });

  it('S6: an expired lease of another fingerprint is not taken over', async () => {
    await claimToken('k1', 'fp-1');
    clock.advance(LEASE + 1);
    const other = await store.claim(request('k1', 'fp-2'));
    expect(other.status).toBe('exists');
    if (other.status === 'exists') expect(other.record.fingerprint).toBe('fp-1');
  });

  it('S14: a complete record stands until its retention ends, then counts as absent', async () => {
    const token = await claimToken('k1');
    expect(await store.complete({ scope: 'tenant-a', key: 'k1', token }, completion('"r1"'))).toBe(
      true,
    );
    clock.advance(RETENTION - 1);
    const stands = await store.claim(request('k1'));
    expect(stands).toMatchObject({
      status: 'exists',
      record: { state: 'complete', outcome: 'committed', result: '"r1"', leaseExpiresAt: null },
    });
    clock.advance(1);
    // Past retention even another fingerprint claims it afresh.
    expect(await store.claim(request('k1', 'fp-2'))).toMatchObject({
      status: 'claimed',
      takenOver: false,
    });
  });

  it('S8: complete and release change nothing for a fence whose token does not match', async () => {
    const token = await claimToken('k1');
    const wrong = { scope: 'tenant-a', key: 'k1', token: 'not-the-token' };
    expect(await store.complete(wrong, completion('"x"'))).toBe(false);
    expect(await store.release(wrong)).toBe(false);
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toMatchObject({
      state: 'in_flight',
      result: null,
    });
    expect(await store.release({ scope: 'tenant-a', key: 'k1', token })).toBe(true);
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toBeUndefined();
  });

  it('S8: after a takeover the original fence can neither complete nor release', async () => {
    const token = await claimToken('k1');
    clock.advance(LEASE);
    await claimToken('k1');
    const stale = { scope: 'tenant-a', key: 'k1', token };
    expect(await store.complete(stale, completion('"late"'))).toBe(false);
    expect(await store.release(stale)).toBe(false);
    expect((await store.read({ scope: 'tenant-a', key: 'k1' }))?.state).toBe('in_flight');
  });

  it('S8: business writes and the fenced completion commit together', async () => {
    const fence = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    const value = await store.transaction(fence, async (tx) => {
      insertBusiness(tx, 'payment-1');
      await Promise.resolve();
      expect(await store.complete(fence, completion('"done"'), tx)).toBe(true);
      return 'done';
    });
    expect(value).toBe('done');
    expect(businessIds(db)).toEqual(['payment-1']);
    expect(await store.read(fence)).toMatchObject({ state: 'complete', result: '"done"' });
  });

  it('S8: a throw rolls back business writes and the completion, and propagates unchanged', async () => {
    const fence = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    const failure = new Error('card declined');
    await expect(
      store.transaction(fence, async (tx) => {
        insertBusiness(tx, 'payment-1');
        await store.complete(fence, completion('"done"'), tx);
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(businessIds(db)).toEqual([]);
    expect(await store.read(fence)).toMatchObject({ state: 'in_flight', result: null });
    expect(db.$client.inTransaction).toBe(false);
  });

  it('S8/S11: transaction throws LeaseLostError without running work once the claim is lost', async () => {
    const fence = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    clock.advance(LEASE);
    await claimToken('k1');
    const work = vi.fn(async () => 'ran');
    await expect(store.transaction(fence, work)).rejects.toBeInstanceOf(LeaseLostError);
    expect(work).not.toHaveBeenCalled();
    expect(db.$client.inTransaction).toBe(false);
  });

  it('S23: a claim made while a transaction awaits does not join (or roll back with) it', async () => {
    const fence = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    const inside = deferred();
    const proceed = deferred();
    const order: string[] = [];
    const running = store.transaction(fence, async (tx) => {
      insertBusiness(tx, 'payment-1');
      inside.resolve();
      await proceed.promise;
      order.push('work done');
      throw new Error('rolled back');
    });
    await inside.promise;
    const otherClaim = store.claim(request('k2')).then((claim) => {
      order.push('other claimed');
      return claim;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    proceed.resolve();
    await expect(running).rejects.toThrow('rolled back');
    expect((await otherClaim).status).toBe('claimed');
    // The claim waited for the transaction, and survived its rollback.
    expect(order).toEqual(['work done', 'other claimed']);
    expect((await store.read({ scope: 'tenant-a', key: 'k2' }))?.state).toBe('in_flight');
    expect(businessIds(db)).toEqual([]);
  });

  it('S23: complete with the handle but outside a transaction takes the lock and works', async () => {
    const fence = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    expect(await store.complete(fence, completion('"ok"'), db)).toBe(true);
  });

  it('S23: a guarded transaction nested in guarded work is a savepoint of the outer one', async () => {
    const outer = { scope: 'tenant-a', key: 'outer', token: await claimToken('outer') };
    await store.transaction(outer, async (tx) => {
      insertBusiness(tx, 'outer-row');
      const claim = await store.claim(request('inner'));
      if (claim.status !== 'claimed') throw new Error('inner claim failed');
      const inner = { scope: 'tenant-a', key: 'inner', token: claim.token };
      await expect(
        store.transaction(inner, async (innerTx) => {
          insertBusiness(innerTx, 'inner-row');
          throw new Error('inner failed');
        }),
      ).rejects.toThrow('inner failed');
      await store.complete(outer, completion('"outer"'), tx);
    });
    expect(businessIds(db)).toEqual(['outer-row']);
    expect((await store.read(outer))?.state).toBe('complete');
  });

  it('S23: a guarded transaction on another connection, nested in guarded work, leaves the outer work inside its own transaction when it ends', async () => {
    // Both connections' locks share one AsyncLocalStorage, which is switched off whenever no
    // transaction is open anywhere: the other connection's ending must not switch it off.
    const other = openTestDatabase(kind);
    try {
      const otherStore = sqliteStore(other.db, { now: clock.now });
      const outer = { scope: 'tenant-a', key: 'outer', token: await claimToken('outer') };
      await store.transaction(outer, async (tx) => {
        insertBusiness(tx, 'outer-row');
        const claim = await otherStore.claim(request('elsewhere'));
        if (claim.status !== 'claimed') throw new Error('claim on the other connection failed');
        const fence = { scope: 'tenant-a', key: 'elsewhere', token: claim.token };
        await otherStore.transaction(fence, async (otherTx) => {
          insertBusiness(otherTx, 'other-row');
          await otherStore.complete(fence, completion('"other"'), otherTx);
        });
        // Still inside the outer transaction: a nested claim here queues on its level, not
        // behind the transaction it is part of (which would wait for itself forever).
        const nested = await Promise.race([
          store.claim(request('inner')),
          new Promise<'waited for itself'>((resolve) =>
            setTimeout(() => resolve('waited for itself'), 2_000),
          ),
        ]);
        expect(nested).toMatchObject({ status: 'claimed' });
        await store.complete(outer, completion('"outer"'), tx);
      });
      expect(businessIds(db)).toEqual(['outer-row']);
      expect(businessIds(other.db)).toEqual(['other-row']);
    } finally {
      other.close();
    }
  });

  it('S14: purge deletes only expired records, in batches, up to maxBatches', async () => {
    for (let i = 0; i < 25; i++) {
      const key = `old-${i}`;
      const token = await claimToken(key);
      await store.complete({ scope: 'tenant-a', key, token }, completion('1'));
    }
    await claimToken('abandoned'); // in flight, its process gone: purgeable after lease + retention
    clock.advance(LEASE + RETENTION);
    for (let i = 0; i < 5; i++) await claimToken(`live-${i}`);

    expect(await store.purge({ batchSize: 10, maxBatches: 2 })).toBe(20);
    expect(await store.purge({ batchSize: 10, maxBatches: Number.POSITIVE_INFINITY })).toBe(6);
    expect(await store.purge({ batchSize: 10, maxBatches: 5 })).toBe(0);
    const left = db.$client
      .prepare('SELECT key FROM idempotency_records ORDER BY key')
      .pluck()
      .all();
    expect(left).toEqual(['live-0', 'live-1', 'live-2', 'live-3', 'live-4']);
    await expect(store.purge({ batchSize: 0, maxBatches: 1 })).rejects.toThrow(TypeError);
  });

  it('S23: file databases run in WAL mode with a busy timeout', () => {
    const mode = db.$client.pragma('journal_mode', { simple: true });
    expect(mode).toBe(kind === 'file' ? 'wal' : 'memory');
    expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(5000);
    sqliteStore(db, { busyTimeoutMs: 250 });
    expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(250);
    if (kind === 'file') expect(db.$client.pragma('synchronous', { simple: true })).toBe(1);
  });
});
