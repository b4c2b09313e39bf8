/**
 * SPEC S10 on SQLite: the store serialises guarded transactions on one connection (S23), but
 * a duplicate of an in-flight key answers 409 at once instead of queuing behind it, and a
 * replay of a complete record does not wait for unrelated work. Records an open transaction
 * wrote are never answered from before it ends. Every case fires its calls at once and checks
 * which finished first, not how long anything took.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IdempotencyError } from '../../src/core/errors.js';
import { createGuard, type Guard } from '../../src/core/guard.js';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { deferred } from '../support/deferred.js';
import {
  businessIds,
  insertBusiness,
  KINDS,
  openTestDatabase,
  type TestDatabase,
} from './helpers.js';

const LONG_MS = 500;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(KINDS)('sqliteStore in-flight answers (%s database)', (kind) => {
  let test: TestDatabase;
  let db: SqliteDatabase;
  beforeEach(() => {
    test = openTestDatabase(kind);
    db = test.db;
  });
  afterEach(() => test.close());

  /** A guarded payment whose work signals `started`, then holds its transaction for `ms`. */
  function payment(key: string, id: string, ms = 0, started = deferred()) {
    return {
      scope: 'tenant-a',
      key,
      fingerprint: `fp-${key}`,
      operation: 'createPayment',
      work: async (tx: SqliteDatabase) => {
        insertBusiness(tx, id);
        started.resolve();
        await pause(ms);
        return { id };
      },
    };
  }

  /** Runs `promise` and notes its name in `order` when it settles, however it settles. */
  function track<T>(order: string[], name: string, promise: Promise<T>) {
    return promise.then(
      (value) => {
        order.push(name);
        return value;
      },
      (error: unknown) => {
        order.push(name);
        return error;
      },
    );
  }

  /**
   * Runs a long payment of `key` (its work holds the transaction open for LONG_MS) and, once
   * that work has started, `next`; returns what each was answered and which settled first.
   */
  async function whileLongPaymentRuns(
    guard: Guard<SqliteDatabase>,
    [key, id]: [string, string],
    next: () => Promise<unknown>,
  ) {
    const started = deferred();
    const order: string[] = [];
    const [long, other] = await Promise.all([
      track(order, 'long', guard.run(payment(key, id, LONG_MS, started))),
      track(order, 'next', started.promise.then(next)),
    ]);
    return { long, next: other, order };
  }

  it('S10/S23: a duplicate of a key in flight gets 409 at once, before the long original ends', async () => {
    const guard = createGuard({ store: sqliteStore(db) });
    const { long, next, order } = await whileLongPaymentRuns(guard, ['k1', 'first'], () =>
      guard.run(payment('k1', 'second')),
    );
    expect(order).toEqual(['next', 'long']);
    expect(IdempotencyError.is(next) && next.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(long).toEqual({ value: { id: 'first' }, replayed: false });
    expect(businessIds(db)).toEqual(['first']);
  });

  it('S10: with `wait`, the duplicate waits for the original and replays its result', async () => {
    const guard = createGuard({ store: sqliteStore(db), wait: 10_000 });
    const { long, next, order } = await whileLongPaymentRuns(guard, ['k1', 'first'], () =>
      guard.run(payment('k1', 'second')),
    );
    expect(order).toEqual(['long', 'next']);
    expect(long).toEqual({ value: { id: 'first' }, replayed: false });
    expect(next).toEqual({ value: { id: 'first' }, replayed: true });
    expect(businessIds(db)).toEqual(['first']);
  });

  it('S9/S10/S23: a replay of an unrelated complete key answers before a long mutation ends', async () => {
    const guard = createGuard({ store: sqliteStore(db) });
    await guard.run(payment('done', 'earlier'));
    const { long, next, order } = await whileLongPaymentRuns(guard, ['k1', 'long'], () =>
      guard.run(payment('done', 'not-run')),
    );
    expect(order).toEqual(['next', 'long']);
    expect(next).toEqual({ value: { id: 'earlier' }, replayed: true });
    expect(long).toEqual({ value: { id: 'long' }, replayed: false });
    expect(businessIds(db)).toEqual(['earlier', 'long']);
  });

  it('S6/S10: another request with a key in flight gets 422 at once, not after the original', async () => {
    const guard = createGuard({ store: sqliteStore(db) });
    const { next, order } = await whileLongPaymentRuns(guard, ['k1', 'first'], () =>
      guard.run({ ...payment('k1', 'other'), fingerprint: 'another-request' }),
    );
    expect(order).toEqual(['next', 'long']);
    expect(IdempotencyError.is(next) && next.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('S8/S10/S23: a record written by a still-open transaction is never replayed; the caller waits for the outcome', async () => {
    // A guarded call nested in guarded work completes inside the outer transaction (a
    // savepoint). Until the outer one ends, that completion is uncommitted: here the outer
    // work then fails, so it rolls back and the nested result never existed.
    const guard = createGuard({ store: sqliteStore(db) });
    const innerDone = deferred();
    const order: string[] = [];
    const outer = guard.run({
      ...payment('outer', 'outer'),
      work: async (tx: SqliteDatabase) => {
        await guard.run(payment('inner', 'inner-first'));
        insertBusiness(tx, 'outer');
        innerDone.resolve();
        await pause(LONG_MS);
        throw new Error('outer failed');
      },
    });
    const [outerOutcome, retry] = await Promise.all([
      track(order, 'outer', outer),
      track(
        order,
        'inner retry',
        innerDone.promise.then(() => guard.run(payment('inner', 'inner-retry'))),
      ),
    ]);
    expect(outerOutcome).toEqual(new Error('outer failed'));
    // Not replayed from the rolled-back savepoint: it ran once the outer transaction ended.
    expect(retry).toEqual({ value: { id: 'inner-retry' }, replayed: false });
    expect(businessIds(db)).toEqual(['inner-retry']);
  });
});
