/**
 * The SQLite store's statements (SPEC S7, S11, S14, S23): each is prepared once per store; a
 * claim that finds a record reads it and runs a takeover only when the row shows it is
 * eligible; and that takeover is still a compare-and-set that another process's change
 * between the read and the write defeats. Statements are observed by wrapping the
 * connection's `prepare`.
 */
import type { Statement } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { IdempotencyStore, StoreExtras } from '../../src/store/seam.js';
import { KINDS, manualClock, openTestDatabase, type TestDatabase } from './helpers.js';

const LEASE = 1_000;
const RETENTION = 60_000;
const request = (key: string, fingerprint = 'fp-1') => ({
  scope: 'tenant-a',
  key,
  fingerprint,
  operation: 'createPayment',
  leaseMs: LEASE,
  retentionMs: RETENTION,
});

interface Observed {
  /** SQL texts passed to `prepare`, in order. */
  prepared: string[];
  /** The first word of each statement run since the last reset (INSERT, SELECT, ...). */
  ran: string[];
  /** Runs once, right after the next SELECT of a record returns (another process's turn). */
  afterNextRead?: () => void;
  /** The connection's own `prepare`, for statements the test runs unobserved. */
  unobserved: (source: string) => Statement;
}

/** Wraps the connection's `prepare` so that the test sees every statement the store runs. */
function observe(db: SqliteDatabase): Observed {
  const client = db.$client;
  const prepare = client.prepare.bind(client);
  const observed: Observed = { prepared: [], ran: [], unobserved: (source) => prepare(source) };
  client.prepare = ((source: string) => {
    const statement = prepare(source) as Statement;
    observed.prepared.push(source);
    const verb = source.trim().split(/\s+/)[0]!.toUpperCase();
    for (const method of ['run', 'get', 'all'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      Object.defineProperty(statement, method, {
        value: (...args: unknown[]) => {
          observed.ran.push(verb);
          const result = original(...args);
          if (verb === 'SELECT' && source.includes('fingerprint') && observed.afterNextRead) {
            const interfere = observed.afterNextRead;
            observed.afterNextRead = undefined;
            interfere();
          }
          return result;
        },
      });
    }
    return statement;
  }) as typeof client.prepare;
  return observed;
}

describe.each(KINDS)('sqliteStore statements (%s database)', (kind) => {
  let test: TestDatabase;
  let clock: ReturnType<typeof manualClock>;
  let observed: Observed;
  let store: IdempotencyStore<SqliteDatabase> & StoreExtras;

  beforeEach(() => {
    test = openTestDatabase(kind);
    clock = manualClock();
    observed = observe(test.db);
    store = sqliteStore(test.db, { now: clock.now });
  });
  afterEach(() => test.close());

  it('S23: every statement is prepared once per store, not per call', async () => {
    for (let i = 0; i < 5; i++) {
      const claim = await store.claim(request(`k${i}`));
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      const fence = { scope: 'tenant-a', key: `k${i}`, token: claim.token };
      await store.transaction(fence, async (tx) => {
        await store.complete(fence, { result: '1', outcome: 'committed', retentionMs: 1 }, tx);
      });
      await store.claim(request(`k${i}`));
      await store.read(fence);
      await store.release(fence);
      await store.purge({ batchSize: 10, maxBatches: 1 });
    }
    const count = observed.prepared.length;
    expect(new Set(observed.prepared).size).toBe(count);
    await store.claim(request('one-more'));
    await store.claim(request('one-more'));
    expect(observed.prepared).toHaveLength(count);
  });

  it('S7/S9: a fresh claim is one statement; one that finds the record is the insert and one read', async () => {
    await store.claim(request('k1'));
    expect(observed.ran).toEqual(['INSERT']);
    observed.ran = [];
    clock.advance(10);
    expect((await store.claim(request('k1'))).status).toBe('exists');
    expect(observed.ran).toEqual(['INSERT', 'SELECT']);
  });

  it('S11: an expired lease is read, found eligible, then taken over by a compare-and-set', async () => {
    await store.claim(request('k1'));
    clock.advance(LEASE);
    observed.ran = [];
    expect(await store.claim(request('k1'))).toMatchObject({ status: 'claimed', takenOver: true });
    expect(observed.ran).toEqual(['INSERT', 'SELECT', 'UPDATE']);
  });

  it('S6: an expired lease of another request is not eligible: no update is tried', async () => {
    await store.claim(request('k1', 'fp-1'));
    clock.advance(LEASE + 1);
    observed.ran = [];
    expect(await store.claim(request('k1', 'fp-2'))).toMatchObject({
      status: 'exists',
      record: { fingerprint: 'fp-1' },
    });
    expect(observed.ran).toEqual(['INSERT', 'SELECT']);
  });

  it('S11/S14: an in-flight record past its whole expiry (its process long gone) is taken over, whatever its fingerprint', async () => {
    await store.claim(request('k1', 'fp-1'));
    clock.advance(LEASE + RETENTION);
    const claim = await store.claim(request('k1', 'fp-2'));
    expect(claim).toMatchObject({ status: 'claimed', takenOver: true });
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toMatchObject({
      fingerprint: 'fp-2',
      state: 'in_flight',
    });
  });

  it('S7/S11: a takeover still carries its conditions: a record changed after the read is not overwritten', async () => {
    await store.claim(request('k1'));
    clock.advance(LEASE);
    const renewedLease = clock.now() + 10 * LEASE;
    // Between our read and our update, another process (another connection on the file)
    // takes the record over itself. Our update must then match nothing.
    observed.afterNextRead = () => {
      observed
        .unobserved(
          `UPDATE idempotency_records SET token = 'other-process', lease_expires_at = ? WHERE scope = 'tenant-a' AND key = 'k1'`,
        )
        .run(renewedLease);
    };
    observed.ran = [];
    const claim = await store.claim(request('k1'));
    expect(claim.status).toBe('exists');
    if (claim.status === 'exists') {
      expect(claim.record.leaseExpiresAt?.getTime()).toBe(renewedLease);
    }
    // Read, eligible, update (matched nothing), then a second attempt sees the new lease.
    expect(observed.ran).toEqual(['INSERT', 'SELECT', 'UPDATE', 'INSERT', 'SELECT']);
    expect(await store.release({ scope: 'tenant-a', key: 'k1', token: 'other-process' })).toBe(
      true,
    );
  });
});
