/**
 * The SQLite store's statements (SPEC S23): each is prepared once per store, not per call.
 * Statements are observed by wrapping the connection's `prepare`. (What a call runs, statement
 * by statement, is in one-transaction.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { IdempotencyStore, StoreExtras } from '../../src/store/seam.js';
import { KINDS, manualClock, openTestDatabase, type TestDatabase } from './helpers.js';

const request = (key: string, fingerprint = 'fp-1') => ({
  scope: 'tenant-a',
  key,
  fingerprint,
  operation: 'createPayment',
});
const ending = (retentionMs: number) => ({
  value: 1,
  completion: { result: '1', outcome: 'committed' as const, retentionMs },
});

/** Wraps the connection's `prepare`; returns the SQL texts passed to it, in order. */
function observePrepared(db: SqliteDatabase): string[] {
  const client = db.$client;
  const prepare = client.prepare.bind(client);
  const prepared: string[] = [];
  client.prepare = ((source: string) => {
    prepared.push(source);
    return prepare(source);
  }) as typeof client.prepare;
  return prepared;
}

describe.each(KINDS)('sqliteStore statements (%s database)', (kind) => {
  let test: TestDatabase;
  let clock: ReturnType<typeof manualClock>;
  let prepared: string[];
  let store: IdempotencyStore<SqliteDatabase> & StoreExtras;

  beforeEach(() => {
    test = openTestDatabase(kind);
    clock = manualClock();
    prepared = observePrepared(test.db);
    store = sqliteStore(test.db, { now: clock.now });
  });
  afterEach(() => test.close());

  it('S23: every statement is prepared once per store, not per call', async () => {
    for (let i = 0; i < 5; i++) {
      // Fresh, then a replay, then (past its retention) replaced; a read, a purge.
      await store.claimAndRun(request(`k${i}`), async () => ending(1));
      await store.claimAndRun(request(`k${i}`), async () => ending(1));
      clock.advance(5);
      await store.claimAndRun(request(`k${i}`, 'fp-2'), async () => ending(60_000));
      await store.read(request(`k${i}`));
      await store.purge({ batchSize: 10, maxBatches: 1 });
    }
    const count = prepared.length;
    expect(new Set(prepared).size).toBe(count);
    await store.claimAndRun(request('one-more'), async () => ending(1));
    await store.claimAndRun(request('one-more'), async () => ending(1));
    expect(prepared).toHaveLength(count);
  });
});
