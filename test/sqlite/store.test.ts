/**
 * What only the SQLite store has: the injected clock (`now`), one connection shared by
 * every guarded transaction (S23) and WAL files. The rules every store meets, this one
 * included, are in test/conformance/ (run on SQLite by test/conformance/sqlite.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { type IdempotencyStore, LeaseLostError, type StoreExtras } from '../../src/store/seam.js';
import { deferred } from '../support/deferred.js';
import {
  businessIds,
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

describe.each(KINDS)('sqliteStore, what only SQLite has (%s database)', (kind) => {
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

  it('S11/S14: on the injected clock (`now`), a lease and a retention end exactly at their instant', async () => {
    const token = await claimToken('k1');
    clock.advance(10);
    const seen = await store.claim(request('k1'));
    if (seen.status !== 'exists') throw new Error(`expected the record, got ${seen.status}`);
    expect(seen.record.readAt.getTime()).toBe(clock.now());
    expect(seen.record.leaseExpiresAt?.getTime()).toBe(clock.now() - 10 + LEASE);
    expect(seen.record.expiresAt.getTime()).toBe(clock.now() - 10 + LEASE + RETENTION);
    clock.advance(LEASE - 11);
    expect((await store.claim(request('k1'))).status).toBe('exists');
    clock.advance(1);
    const takeover = await store.claim(request('k1'));
    expect(takeover).toMatchObject({ status: 'claimed', takenOver: true });
    if (takeover.status !== 'claimed') return;
    expect(takeover.token).not.toBe(token);

    const fence = { scope: 'tenant-a', key: 'k1', token: takeover.token };
    expect(await store.complete(fence, completion('"r1"'))).toBe(true);
    clock.advance(RETENTION - 1);
    expect((await store.claim(request('k1', 'fp-2'))).status).toBe('exists');
    clock.advance(1);
    expect(await store.claim(request('k1', 'fp-2'))).toMatchObject({
      status: 'claimed',
      takenOver: false,
    });
  });

  it('S23: a transaction refused (its claim lost) or rolled back leaves the connection outside any transaction', async () => {
    const lost = { scope: 'tenant-a', key: 'k1', token: await claimToken('k1') };
    clock.advance(LEASE);
    await claimToken('k1');
    await expect(store.transaction(lost, async () => 'ran')).rejects.toBeInstanceOf(LeaseLostError);
    expect(db.$client.inTransaction).toBe(false);

    const failing = { scope: 'tenant-a', key: 'k2', token: await claimToken('k2') };
    await expect(
      store.transaction(failing, async (tx) => {
        insertBusiness(tx, 'payment-2');
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('card declined');
      }),
    ).rejects.toThrow('card declined');
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

  it('S23: file databases run in WAL mode with a busy timeout', () => {
    const mode = db.$client.pragma('journal_mode', { simple: true });
    expect(mode).toBe(kind === 'file' ? 'wal' : 'memory');
    expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(5000);
    sqliteStore(db, { busyTimeoutMs: 250 });
    expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(250);
    if (kind === 'file') expect(db.$client.pragma('synchronous', { simple: true })).toBe(1);
  });
});
