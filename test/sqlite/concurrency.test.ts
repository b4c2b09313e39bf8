/**
 * Many guarded calls at once in one process, through the real guard: the async lock must
 * keep each claim out of other requests' open transactions (SPEC S7, S8, S23). Identical
 * calls and distinct keys fired at once are rules of every store: test/conformance/.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/core/guard.js';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import {
  businessIds,
  insertBusiness,
  KINDS,
  openTestDatabase,
  type TestDatabase,
} from './helpers.js';

const CALLS = 50;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(KINDS)('sqliteStore under concurrency (%s database)', (kind) => {
  let test: TestDatabase;
  let db: SqliteDatabase;
  beforeEach(() => {
    test = openTestDatabase(kind);
    db = test.db;
  });
  afterEach(() => test.close());

  function payment(key: string, id: string) {
    return {
      scope: 'tenant-a',
      key,
      fingerprint: 'fp',
      operation: 'createPayment',
      work: async (tx: SqliteDatabase) => {
        await pause(2); // the transaction stays open across awaits
        insertBusiness(tx, id);
        await pause(1);
        return { id };
      },
    };
  }

  it(`S7/S9/S10: with wait, ${CALLS} identical calls all answer with the first result`, async () => {
    const guard = createGuard({ store: sqliteStore(db), wait: 10_000 });
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => guard.run(payment('same-key', `payment-${i}`))),
    );
    const [row] = businessIds(db);
    expect(businessIds(db)).toHaveLength(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    for (const result of results) expect(result.value).toEqual({ id: row });
  });

  it(`S8/S23: ${CALLS} staggered keys, every third failing: each commits or rolls back alone`, async () => {
    const guard = createGuard({ store: sqliteStore(db) });
    // Staggered starts put claims and completions inside other calls' open transactions
    // (which a missing lock would let them join, and roll back with the failing ones).
    const settled = await Promise.allSettled(
      Array.from({ length: CALLS }, async (_, i) => {
        await pause(i % 7);
        const call = payment(`key-${i}`, `payment-${i}`);
        if (i % 3 !== 0) return guard.run(call);
        return guard.run({
          ...call,
          work: async (tx: SqliteDatabase) => {
            await call.work(tx);
            throw new Error(`failed ${i}`);
          },
        });
      }),
    );
    const expected = Array.from({ length: CALLS }, (_, i) => i).filter((i) => i % 3 !== 0);
    settled.forEach((s, i) => {
      expect(s.status, `call ${i}`).toBe(i % 3 === 0 ? 'rejected' : 'fulfilled');
      if (s.status === 'rejected') expect(s.reason).toEqual(new Error(`failed ${i}`));
    });
    expect(businessIds(db)).toEqual(expected.map((i) => `payment-${i}`).sort());
    const records = db.$client.prepare('SELECT count(*) FROM idempotency_records').pluck().get();
    expect(records).toBe(expected.length); // failed calls released their keys
  });

  it('S8/S12: a failing call among concurrent ones rolls back alone and frees its key', async () => {
    const guard = createGuard({ store: sqliteStore(db) });
    const failing = {
      ...payment('bad-key', 'bad'),
      work: async (tx: SqliteDatabase) => {
        insertBusiness(tx, 'bad');
        await pause(3);
        throw new Error('boom');
      },
    };
    const settled = await Promise.allSettled([
      guard.run(payment('k1', 'p1')),
      guard.run(failing),
      guard.run(payment('k2', 'p2')),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(businessIds(db)).toEqual(['p1', 'p2']);
    const retry = await guard.run(payment('bad-key', 'bad-retry'));
    expect(retry.replayed).toBe(false);
    expect(businessIds(db)).toEqual(['bad-retry', 'p1', 'p2']);
  });
});
