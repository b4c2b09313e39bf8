/**
 * The guard's state machine to the letter (SPEC S8-S16, S25), on stores in memory: the lease
 * model that a store without `claimAndRun` gets, the one-transaction model's failures, the
 * bounded wait, the events and purge. Each case here is one a bug planted by
 * `npm run mutate` got past the rest of the fast suite.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createGuard,
  type GuardEvent,
  type GuardOptions,
  IdempotencyError,
  type IdempotencyStore,
  MAX_OPERATION_NAME,
  rollback,
  StoreFailure,
} from '../../src/index.js';
import { type ClaimAndRunResult, LeaseLostError, type StoredRecord } from '../../src/store/seam.js';
import { leaseStore, type MemoryTx } from './lease-store.js';

afterEach(() => {
  vi.useRealTimers();
});

const KEY = 'key-8d1f2c';
const keyHash = createHash('sha256').update(KEY).digest('hex').slice(0, 12);

/** A guarded call of acct/KEY, fingerprint f, unless told otherwise. */
const call = <Tx, T>(work: (tx: Tx) => Promise<T>, fields: { fingerprint?: string } = {}) => ({
  scope: 'acct',
  key: KEY,
  fingerprint: fields.fingerprint ?? 'f',
  operation: 'pay',
  work,
});

/** A guard on `store` whose events land in the returned list. */
function guardOn<Tx>(store: IdempotencyStore<Tx>, options: Partial<GuardOptions<Tx>> = {}) {
  const events: GuardEvent[] = [];
  const guard = createGuard<Tx>({
    store,
    retention: 60_000,
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { guard, events, types: () => events.map((e) => e.type) };
}

/** The error a call failed with; a call that resolves fails the test. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as IdempotencyError & { cause: unknown },
  );

describe('S7/S8/S12: the lease model (a store without claimAndRun)', () => {
  it('S7/S8/S25: a fresh call claims, runs in the store transaction, stores its result with its writes as committed, and reports claimed then completed; a retry replays', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    const first = await guard.run(
      call(async (tx: MemoryTx) => {
        tx.writes.push('p1');
        return { paid: 1 };
      }),
    );
    expect(first).toEqual({ value: { paid: 1 }, replayed: false });
    expect(store.committed).toEqual(['p1']);
    const completion = store.calls.find((c) => c.step === 'complete');
    expect(completion?.completion).toEqual({
      result: '{"paid":1}',
      outcome: 'committed',
      retentionMs: 60_000,
    });
    expect(completion?.fence).toEqual({ scope: 'acct', key: KEY, token: 't1' });
    expect(types()).toEqual(['claimed', 'completed']);
    let ran = false;
    const retry = await guard.run(call(async () => (ran = true)));
    expect(retry).toEqual({ value: { paid: 1 }, replayed: true });
    expect(ran).toBe(false);
    expect(types()).toEqual(['claimed', 'completed', 'replayed']);
  });

  it('S11/S25: a call that takes over an expired lease of its request reports taken-over', async () => {
    const store = leaseStore();
    await store.claim({
      scope: 'acct',
      key: KEY,
      fingerprint: 'f',
      operation: 'pay',
      leaseMs: 1,
      retentionMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const { guard, types } = guardOn(store);
    expect(await guard.run(call(async () => 'again'))).toEqual({ value: 'again', replayed: false });
    expect(types()).toEqual(['taken-over', 'completed']);
  });

  it('S12: rollback(value) rolls the writes back, frees the key and answers the value; a retry runs afresh', async () => {
    const store = leaseStore();
    const { guard, events, types } = guardOn(store);
    let runs = 0;
    const work = async (tx: MemoryTx) => {
      runs++;
      tx.writes.push('p1');
      return rollback({ declined: runs === 1 });
    };
    expect(await guard.run(call(work))).toEqual({ value: { declined: true }, replayed: false });
    expect(store.committed).toEqual([]);
    expect(store.records.size).toBe(0);
    expect(types()).toEqual(['claimed', 'released']);
    expect(events[1]!.reason).toEqual(expect.any(String));
    expect(await guard.run(call(work))).toEqual({ value: { declined: false }, replayed: false });
    expect(runs).toBe(2);
  });

  it('S12: rollback(value, { keep: true }) rolls the writes back, then stores the answer as rolled_back and replays it', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    const answer = await guard.run(
      call(async (tx: MemoryTx) => {
        tx.writes.push('p1');
        return rollback({ declined: true }, { keep: true });
      }),
    );
    expect(answer).toEqual({ value: { declined: true }, replayed: false });
    expect(store.committed).toEqual([]);
    expect(store.calls.filter((c) => c.step === 'complete').at(-1)?.completion).toEqual({
      result: '{"declined":true}',
      outcome: 'rolled_back',
      retentionMs: 60_000,
    });
    expect(types()).toEqual(['claimed', 'completed']);
    expect(await guard.run(call(async () => 'ran'))).toEqual({
      value: { declined: true },
      replayed: true,
    });
  });

  it('S12: a kept answer whose claim was lost meanwhile is still answered, stored nowhere, and reported failed', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    store.lost = true;
    const answer = await guard.run(call(async () => rollback('declined', { keep: true })));
    expect(answer).toEqual({ value: 'declined', replayed: false });
    expect([...store.records.values()][0]?.state).toBe('in_flight');
    expect(types()).toEqual(['claimed', 'failed']);
  });

  it('S15/S26: a store that fails storing a kept answer answers 503, its cause naming neither key nor answer', async () => {
    const store = leaseStore();
    const { guard } = guardOn(store);
    store.fail.complete = new Error(`insert failed for ${KEY}: "card declined 4242"`);
    const error = await failure(
      guard.run(call(async () => rollback('card declined 4242', { keep: true }))),
    );
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(StoreFailure.is(error.cause)).toBe(true);
    const message = (error.cause as StoreFailure).message;
    expect(message).toContain('insert failed for [redacted]');
    expect(message).not.toContain(KEY);
    expect(message).not.toContain('4242');
  });

  it('S12: a work that throws rolls back, frees the key and rethrows its very error', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    const boom = new Error('boom');
    const error = await failure(
      guard.run(
        call(async (tx: MemoryTx) => {
          tx.writes.push('p1');
          throw boom;
        }),
      ),
    );
    expect(error).toBe(boom);
    expect(store.committed).toEqual([]);
    expect(store.records.size).toBe(0);
    expect(types()).toEqual(['claimed', 'released']);
  });

  it('S12: a release that fails after a failed work changes nothing of the answer', async () => {
    const store = leaseStore();
    const { guard } = guardOn(store);
    store.fail.release = new Error('release failed');
    const boom = new Error('boom');
    expect(await failure(guard.run(call(async () => Promise.reject(boom))))).toBe(boom);
    const other = { ...call(async () => rollback('no')), key: 'other' };
    expect(await guard.run(other)).toEqual({ value: 'no', replayed: false });
  });

  it('S8: a completion that no longer holds the claim rolls everything back and answers 409 with Retry-After 1', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    store.lost = true;
    const error = await failure(
      guard.run(
        call(async (tx: MemoryTx) => {
          tx.writes.push('p1');
          return 'late';
        }),
      ),
    );
    expect(error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_IN_USE',
      retryAfterSeconds: 1,
      keyHash,
    });
    expect(error.cause).toBeInstanceOf(LeaseLostError);
    expect(store.committed).toEqual([]);
    expect(types()).toEqual(['claimed', 'failed']);
  });

  it('S16: a result of exactly maxResultBytes is stored; one byte more rolls back, frees the key and answers 500 with the key hash', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store, { maxResultBytes: 10 });
    // '"12345678"' is 10 bytes as JSON.
    expect(await guard.run(call(async () => '12345678'))).toEqual({
      value: '12345678',
      replayed: false,
    });
    const other = { ...call(async (tx: MemoryTx) => tx.writes.push('p')), key: 'other' };
    const error = await failure(guard.run({ ...other, work: async () => '123456789' }));
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_RESULT_TOO_LARGE', status: 500 });
    expect(error.keyHash).toBe(createHash('sha256').update('other').digest('hex').slice(0, 12));
    expect(store.records.has(`acct\u0000other`)).toBe(false);
    expect(types().at(-1)).toBe('failed');
  });

  it('S15/S26: a transaction that fails after the work answers 503, frees the key, and its cause names neither key nor stored result', async () => {
    const store = leaseStore();
    const { guard, types } = guardOn(store);
    store.fail.complete = new Error(`could not write ${KEY} = {"card":"4242"}`);
    const error = await failure(guard.run(call(async () => ({ card: '4242' }))));
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    const message = (error.cause as StoreFailure).message;
    expect(message).toContain('could not write [redacted] = [redacted]');
    expect(store.calls.at(-1)?.step).toBe('release');
    expect(types()).toEqual(['claimed', 'failed']);
  });
});

/** A one-transaction store whose `claimAndRun` is `run`; the rest must not be reached. */
function oneTransaction(
  run: (
    work: (
      tx: never,
      claim: { takenOver: boolean },
    ) => Promise<{ value: unknown; completion: unknown }>,
  ) => Promise<ClaimAndRunResult<unknown>>,
  calls: number[] = [],
): IdempotencyStore<never> {
  const unreachable = () => Promise.reject(new Error('not part of this store'));
  return {
    claimAndRun: ((_request: unknown, work: never) => {
      calls.push(Date.now());
      return run(work);
    }) as IdempotencyStore<never>['claimAndRun'],
    claim: unreachable,
    transaction: unreachable,
    complete: unreachable,
    release: unreachable,
    purge: async () => 0,
  };
}

describe('S8/S12/S15: the one-transaction model, when something fails', () => {
  it('S15/S26: a claim that fails before the work answers 503, runs nothing, and its cause does not name the key', async () => {
    let ran = false;
    const store = oneTransaction(() => Promise.reject(new Error(`lock failed for ${KEY}`)));
    const error = await failure(guardOn(store).guard.run(call(async () => (ran = true))));
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect((error.cause as StoreFailure).message).toBe('Error: lock failed for [redacted]');
    expect(ran).toBe(false);
  });

  it('S15/S26: a store that fails after the work answers 503, its cause naming neither key nor answer', async () => {
    const store = oneTransaction(async (work) => {
      const { completion } = await work(undefined as never, { takenOver: false });
      throw new Error(`finish failed: ${KEY} ${(completion as { result: string }).result}`);
    });
    const error = await failure(guardOn(store).guard.run(call(async () => 'card 4242')));
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect((error.cause as StoreFailure).message).toBe(
      'Error: finish failed: [redacted] [redacted]',
    );
  });

  it("S12: the work's own error is rethrown as it is, and the key is reported released", async () => {
    const boom = new Error('boom');
    const store = oneTransaction(async (work) => {
      const { value } = await work(undefined as never, { takenOver: false });
      return { status: 'done', value };
    });
    const { guard, types } = guardOn(store);
    expect(await failure(guard.run(call(async () => Promise.reject(boom))))).toBe(boom);
    expect(types()).toEqual(['claimed', 'released']);
  });

  it('S8: a claim lost at commit answers 409 with Retry-After 1; a kept final answer is answered all the same', async () => {
    const store = oneTransaction(async (work) => {
      await work(undefined as never, { takenOver: false });
      throw new LeaseLostError();
    });
    const error = await failure(guardOn(store).guard.run(call(async () => 'done')));
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', retryAfterSeconds: 1 });
    const kept = await guardOn(store).guard.run(
      call(async () => rollback({ declined: true }, { keep: true })),
    );
    expect(kept).toEqual({ value: { declined: true }, replayed: false });
  });

  it('S6/S10: a key a running transaction holds answers at once, without wait: 422 for another request, 409 (Retry-After 1) for the same', async () => {
    for (const sameRequest of [false, true]) {
      const calls: number[] = [];
      const store = oneTransaction(async () => ({ status: 'in_flight', sameRequest }), calls);
      const error = await failure(guardOn(store).guard.run(call(async () => 'ran')));
      expect(error).toMatchObject(
        sameRequest
          ? { code: 'IDEMPOTENCY_KEY_IN_USE', retryAfterSeconds: 1, keyHash }
          : { code: 'IDEMPOTENCY_KEY_REUSED', status: 422, keyHash },
      );
      expect(calls).toHaveLength(1);
    }
  });
});

/** A record standing for KEY, read now. */
function standing(fields: Partial<StoredRecord>): StoredRecord {
  const now = new Date();
  return {
    scope: 'acct',
    key: KEY,
    fingerprint: 'f',
    operation: 'pay',
    state: 'in_flight',
    outcome: null,
    result: null,
    leaseExpiresAt: new Date(now.getTime() + 30_000),
    expiresAt: new Date(now.getTime() + 60_000),
    createdAt: now,
    readAt: now,
    ...fields,
  };
}

describe('S10: the bounded wait', () => {
  it('S10: without wait, an in-flight record answers 409 after one look at the store', async () => {
    const calls: number[] = [];
    const store = oneTransaction(async () => ({ status: 'exists', record: standing({}) }), calls);
    const error = await failure(guardOn(store).guard.run(call(async () => 'ran')));
    expect(error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(calls).toHaveLength(1);
  });

  it('S10: with wait, a duplicate looks again after 25, 50, 100, 200, then every 400 ms, and answers 409 at the deadline, not after', async () => {
    vi.useFakeTimers({ now: 0 });
    const calls: number[] = [];
    const store = oneTransaction(async () => ({ status: 'in_flight', sameRequest: true }), calls);
    const answer = failure(guardOn(store, { wait: 1_500 }).guard.run(call(async () => 'ran')));
    let answeredAt: number | undefined;
    void answer.then(() => {
      answeredAt = Date.now();
    });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls).toEqual([0, 25, 75, 175, 375, 775, 1_175, 1_500]);
    expect((await answer).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(answeredAt).toBe(1_500);
  });
});

describe('S9/S14: what is replayed', () => {
  it('S14: a complete record whose expiry is the very moment it was read is not replayed', async () => {
    const now = new Date();
    const record = standing({
      state: 'complete',
      outcome: 'committed',
      result: '"stale"',
      leaseExpiresAt: null,
      expiresAt: now,
      readAt: now,
    });
    const store = oneTransaction(async () => ({ status: 'exists', record }));
    const { guard, types } = guardOn(store);
    expect((await failure(guard.run(call(async () => 'ran'))))?.code).toBe(
      'IDEMPOTENCY_KEY_IN_USE',
    );
    expect(types()).toEqual(['in-use']);
  });

  it('S6/S25: a record of another request answers 422 with the key hash, and reports reused', async () => {
    const store = oneTransaction(async () => ({
      status: 'exists',
      record: standing({ fingerprint: 'other' }),
    }));
    const { guard, types } = guardOn(store);
    const error = await failure(guard.run(call(async () => 'ran')));
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', keyHash });
    expect(types()).toEqual(['reused']);
  });

  it('S9/S12: a work that answers null, undefined, 0 or a string is answered and replayed as it was', async () => {
    for (const value of [null, 0, '', 'text', false]) {
      const store = leaseStore();
      const { guard } = guardOn(store);
      expect(await guard.run(call(async () => value))).toEqual({ value, replayed: false });
      expect(await guard.run(call(async () => 'again'))).toEqual({ value, replayed: true });
    }
    const store = leaseStore();
    const { guard } = guardOn(store);
    expect(await guard.run(call(async () => undefined))).toEqual({
      value: undefined,
      replayed: false,
    });
    expect(await guard.run(call(async () => 'again'))).toEqual({ value: null, replayed: true });
  });
});

describe('S25: events', () => {
  it('S25: each event carries the operation, scope, key hash and a duration within the call; a reason only where there is one', async () => {
    const store = leaseStore();
    const { guard, events } = guardOn(store);
    const started = performance.now();
    await guard.run(call(async () => 1));
    const elapsed = performance.now() - started;
    expect(events.map((e) => e.type)).toEqual(['claimed', 'completed']);
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(
        ['durationMs', 'keyHash', 'operation', 'scope', 'type'].sort(),
      );
      expect(event).toMatchObject({ operation: 'pay', scope: 'acct', keyHash });
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
      expect(event.durationMs).toBeLessThanOrEqual(elapsed + 1);
    }
  });

  it(`S25: keeps an operation name of exactly ${MAX_OPERATION_NAME} characters as it is`, async () => {
    const store = leaseStore();
    const { guard, events } = guardOn(store);
    const name = 'p'.repeat(MAX_OPERATION_NAME);
    await guard.run({ ...call(async () => 1), operation: name });
    expect([...store.records.values()][0]?.operation).toBe(name);
    expect(events[0]?.operation).toBe(name);
  });
});

describe('S14: purge', () => {
  it('S14/S25: purge asks the store for batches of 1000, as many as there are, and reports purged with the count', async () => {
    const asked: unknown[] = [];
    const store = {
      ...leaseStore(),
      purge: async (options: unknown) => {
        asked.push(options);
        return 3;
      },
    };
    const { guard, events } = guardOn(store);
    expect(await guard.purge()).toBe(3);
    expect(await guard.purge({ batchSize: 10, maxBatches: 2 })).toBe(3);
    expect(asked).toEqual([
      { batchSize: 1000, maxBatches: Number.POSITIVE_INFINITY },
      { batchSize: 10, maxBatches: 2 },
    ]);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ type: 'purged', operation: '', count: 3 });
    expect(events[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(events[0]!.durationMs).toBeLessThan(10_000);
    expect(await createGuard({ store }).purge()).toBe(3);
  });
});

describe('S19: errors', () => {
  it('recognises its errors, and nothing else, not even null', () => {
    expect(IdempotencyError.is(null)).toBe(false);
    expect(IdempotencyError.is(undefined)).toBe(false);
    expect(StoreFailure.is(null)).toBe(false);
    expect(IdempotencyError.is(new IdempotencyError('IDEMPOTENCY_KEY_MISSING', 'x'))).toBe(true);
  });
});
