/**
 * What only the SQLite store has: the injected clock (`now`), one connection shared by
 * every guarded transaction (S23) and WAL files. The rules every store meets, this one
 * included, are in test/conformance/ (run on SQLite by test/conformance/sqlite.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { IdempotencyStore, StoreExtras, WorkEnding } from '../../src/store/seam.js';
import { deferred } from '../support/deferred.js';
import {
  businessIds,
  insertBusiness,
  KINDS,
  manualClock,
  openTestDatabase,
  type TestDatabase,
} from './helpers.js';

const RETENTION = 60_000;
const request = (key: string, fingerprint = 'fp-1', scope = 'tenant-a') => ({
  scope,
  key,
  fingerprint,
  operation: 'createPayment',
});
/** Ends the work with `value`, stored as its result. */
const ending = <T>(value: T): WorkEnding<T> => ({
  value,
  completion: { result: JSON.stringify(value), outcome: 'committed', retentionMs: RETENTION },
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

  it('S14: on the injected clock (`now`), a retention ends exactly at its instant', async () => {
    const claimedAt = clock.now();
    await store.claimAndRun(request('k1'), async () => {
      clock.advance(10);
      return ending('r1');
    });
    const seen = await store.claimAndRun(request('k1'), async () => ending('never'));
    if (seen.status !== 'exists') throw new Error(`expected the record, got ${seen.status}`);
    expect(seen.record.readAt.getTime()).toBe(clock.now());
    expect(seen.record.createdAt.getTime()).toBe(claimedAt);
    expect(seen.record.expiresAt.getTime()).toBe(claimedAt + 10 + RETENTION);
    clock.advance(RETENTION - 1);
    expect((await store.claimAndRun(request('k1', 'fp-2'), async () => ending('no'))).status).toBe(
      'exists',
    );
    clock.advance(1);
    expect(await store.claimAndRun(request('k1', 'fp-2'), async () => ending('r2'))).toEqual({
      status: 'done',
      value: 'r2',
    });
  });

  it('S23: a transaction that found a record, or whose work threw, leaves the connection outside any transaction', async () => {
    await store.claimAndRun(request('k1'), async () => ending('first'));
    expect((await store.claimAndRun(request('k1'), async () => ending('again'))).status).toBe(
      'exists',
    );
    expect(db.$client.inTransaction).toBe(false);

    await expect(
      store.claimAndRun(request('k2'), async (tx) => {
        insertBusiness(tx, 'payment-2');
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('card declined');
      }),
    ).rejects.toThrow('card declined');
    expect(db.$client.inTransaction).toBe(false);
    expect(businessIds(db)).toEqual([]);
  });

  it('S23: a call made while a transaction awaits does not join (or roll back with) it', async () => {
    const inside = deferred();
    const proceed = deferred();
    const order: string[] = [];
    const running = store.claimAndRun(request('k1'), async (tx) => {
      insertBusiness(tx, 'payment-1');
      inside.resolve();
      await proceed.promise;
      order.push('work done');
      throw new Error('rolled back');
    });
    await inside.promise;
    const other = store.claimAndRun(request('k2'), async (tx) => {
      insertBusiness(tx, 'payment-2');
      order.push('other ran');
      return ending('other');
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    proceed.resolve();
    await expect(running).rejects.toThrow('rolled back');
    expect(await other).toEqual({ status: 'done', value: 'other' });
    // The other call waited for the transaction, and survived its rollback.
    expect(order).toEqual(['work done', 'other ran']);
    expect(await store.read({ scope: 'tenant-a', key: 'k2' })).toMatchObject({
      result: '"other"',
    });
    expect(businessIds(db)).toEqual(['payment-2']);
  });

  it('S23: a guarded transaction nested in guarded work is a savepoint of the outer one', async () => {
    await store.claimAndRun(request('outer'), async (tx) => {
      insertBusiness(tx, 'outer-row');
      await expect(
        store.claimAndRun(request('inner'), async (innerTx) => {
          insertBusiness(innerTx, 'inner-row');
          throw new Error('inner failed');
        }),
      ).rejects.toThrow('inner failed');
      return ending('outer');
    });
    expect(businessIds(db)).toEqual(['outer-row']);
    expect(await store.read(request('outer'))).toMatchObject({ result: '"outer"' });
    expect(await store.read(request('inner'))).toBeUndefined();
  });

  it('S23: a guarded transaction on another connection, nested in guarded work, leaves the outer work inside its own transaction when it ends', async () => {
    // Both connections' locks share one AsyncLocalStorage, which is switched off whenever no
    // transaction is open anywhere: the other connection's ending must not switch it off.
    const other = openTestDatabase(kind);
    try {
      const otherStore = sqliteStore(other.db, { now: clock.now });
      await store.claimAndRun(request('outer'), async (tx) => {
        insertBusiness(tx, 'outer-row');
        await otherStore.claimAndRun(request('elsewhere'), async (otherTx) => {
          insertBusiness(otherTx, 'other-row');
          return ending('other');
        });
        // Still inside the outer transaction: a nested call here queues on its level, not
        // behind the transaction it is part of (which would wait for itself forever).
        const nested = await Promise.race([
          store.claimAndRun(request('inner'), async () => ending('inner')),
          new Promise<'waited for itself'>((resolve) =>
            setTimeout(() => resolve('waited for itself'), 2_000),
          ),
        ]);
        expect(nested).toEqual({ status: 'done', value: 'inner' });
        return ending('outer');
      });
      expect(businessIds(db)).toEqual(['outer-row']);
      expect(businessIds(other.db)).toEqual(['other-row']);
      expect(await store.read(request('inner'))).toMatchObject({ result: '"inner"' });
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
