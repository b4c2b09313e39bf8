/**
 * One conformance suite for every store (STYLE: "one store conformance suite, run against
 * SQLite (file and memory), Postgres (real server) and PGlite"). It drives each store
 * through the real guard, so every rule below is checked end to end on every dialect.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createGuard,
  type Guard,
  type GuardEvent,
  type GuardOptions,
  IdempotencyError,
  type IdempotencyStore,
  jsonSerializer,
  rollback,
  type StoreExtras,
} from '../../src/index.js';

export interface ConformanceContext<Tx> {
  /** A migrated store on a table of its own. */
  store: IdempotencyStore<Tx> & StoreExtras;
  /** Writes one business row through the guarded transaction. */
  insertPayment(tx: Tx, id: string): Promise<void>;
  /** Business rows committed so far (read outside any guarded transaction). */
  countPayments(): Promise<number>;
  /** A store on the same table through a separate connection pool, where the dialect has one. */
  secondStore?: () => Promise<IdempotencyStore<Tx>>;
  close(): Promise<void>;
}

export interface ConformanceTarget<Tx> {
  name: string;
  setup(): Promise<ConformanceContext<Tx>>;
  /** A store whose database cannot be reached (S15). */
  unreachable(): Promise<{ store: IdempotencyStore<Tx>; close(): Promise<void> }>;
  /** Why multi-connection tests are skipped, when they are (never under CI). */
  skipMultiConnection?: string;
}

const SHORT_LEASE = 150;
const PAST_LEASE = 400;

export function describeStoreConformance<Tx>(target: ConformanceTarget<Tx>): void {
  describe(`store conformance: ${target.name}`, () => {
    let ctx: ConformanceContext<Tx>;
    let events: GuardEvent[];
    beforeEach(async () => {
      ctx = await target.setup();
      events = [];
    });
    afterEach(async () => {
      await ctx.close();
    });

    const guardFor = (overrides: Partial<GuardOptions<Tx>> = {}) =>
      createGuard<Tx>({ store: ctx.store, onEvent: (e) => events.push(e), ...overrides });
    const call = <T>(
      key: string,
      work: (tx: Tx) => Promise<T>,
      fields: { fingerprint?: string; scope?: string; retention?: number } = {},
    ) => ({
      scope: fields.scope ?? 'acct_1',
      key,
      fingerprint: fields.fingerprint ?? 'fp-a',
      operation: 'createPayment',
      ...(fields.retention === undefined ? {} : { retention: fields.retention }),
      work,
    });
    /** Claims acct_1/k1 (fingerprint fp-a) straight through the store, as another request would. */
    const claimAsAnotherRequest = (leaseMs = 30_000) =>
      ctx.store.claim({
        scope: 'acct_1',
        key: 'k1',
        fingerprint: 'fp-a',
        operation: 'createPayment',
        leaseMs,
        retentionMs: 60_000,
      });
    const codeOf = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        if (IdempotencyError.is(error)) return error.code;
        throw error;
      }
      return 'resolved';
    };

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
      expect(record?.state).toBe('complete');
      expect(record?.outcome).toBe('committed');
      expect(events.map((e) => e.type)).toEqual(['claimed', 'completed']);
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
      expect(events.map((e) => e.type)).toContain('reused');
    });

    it('S10/S6: an in-flight claim answers 409 with Retry-After for the same request, 422 for another', async () => {
      const held = await claimAsAnotherRequest();
      expect(held.status).toBe('claimed');
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
    });

    it('S11/S6: an expired lease is taken over by the same request, never by a different one', async () => {
      await claimAsAnotherRequest(SHORT_LEASE);
      await sleep(PAST_LEASE);
      const guard = guardFor();
      await expect(
        codeOf(guard.run(call('k1', async () => 'b', { fingerprint: 'fp-b' }))),
      ).resolves.toBe('IDEMPOTENCY_KEY_REUSED');
      const taken = await guard.run(
        call('k1', async (tx) => {
          await ctx.insertPayment(tx, 'p1');
          return 'a';
        }),
      );
      expect(taken).toEqual({ value: 'a', replayed: false });
      expect(events.map((e) => e.type)).toContain('taken-over');
      expect(await ctx.countPayments()).toBe(1);
    });

    it('S8/S11: a slow original whose lease was taken over is fenced out; only the retry commits', async () => {
      // The original claims, then stalls before its transaction (a GC pause, a slow
      // network) past its lease. A retry takes over and completes. When the original
      // resumes, its transaction must refuse to run and nothing of it may commit.
      let releaseOriginal!: () => void;
      const stalled = new Promise<void>((resolve) => {
        releaseOriginal = resolve;
      });
      let stallNext = true;
      const stallingStore: IdempotencyStore<Tx> = {
        ...bindAll(ctx.store),
        transaction: async (fence, work) => {
          if (stallNext) {
            stallNext = false;
            await stalled;
          }
          return ctx.store.transaction(fence, work);
        },
      };
      const original = createGuard<Tx>({ store: stallingStore, lease: SHORT_LEASE })
        .run(
          call('k1', async (tx) => {
            await ctx.insertPayment(tx, 'original');
            return 'original';
          }),
        )
        .catch((e) => e);
      await sleep(PAST_LEASE);
      const retry = await guardFor().run(
        call('k1', async (tx) => {
          await ctx.insertPayment(tx, 'retry');
          return 'retry';
        }),
      );
      expect(retry).toEqual({ value: 'retry', replayed: false });
      releaseOriginal();
      const originalOutcome = await original;
      expect(IdempotencyError.is(originalOutcome) && originalOutcome.code).toBe(
        'IDEMPOTENCY_KEY_IN_USE',
      );
      expect(await ctx.countPayments()).toBe(1);
      expect(await guardFor().run(call('k1', async () => 'never'))).toEqual({
        value: 'retry',
        replayed: true,
      });
    });

    it('S8: a completion whose token no longer matches rolls the whole transaction back', async () => {
      const claim = await claimAsAnotherRequest();
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      const fence = { scope: 'acct_1', key: 'k1', token: claim.token };
      const stale = { ...fence, token: 'not-the-token' };
      const completion = { result: '"x"', outcome: 'committed' as const, retentionMs: 60_000 };
      const outcome = await ctx.store
        .transaction(fence, async (tx) => {
          await ctx.insertPayment(tx, 'p1');
          const ok = await ctx.store.complete(stale, completion, tx);
          if (!ok) throw new Error('fenced out');
          return 'committed';
        })
        .catch((e: Error) => e.message);
      expect(outcome).toBe('fenced out');
      expect(await ctx.countPayments()).toBe(0);
      expect(await ctx.store.release(stale)).toBe(false);
      expect((await ctx.store.read(fence))?.state).toBe('in_flight');
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
      expect(events.map((e) => e.type)).toContain('released');
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
      await guard.run(call('old', async () => 'first', { retention: SHORT_LEASE }));
      await guard.run(call('fresh', async () => 'kept'));
      await sleep(PAST_LEASE);
      const again = await guard.run(
        call('old', async () => 'second', { fingerprint: 'fp-new', retention: SHORT_LEASE }),
      );
      expect(again).toEqual({ value: 'second', replayed: false });
      await sleep(PAST_LEASE);
      expect(await guard.purge({ batchSize: 1 })).toBe(1);
      expect(await ctx.store.read({ scope: 'acct_1', key: 'old' })).toBeUndefined();
      expect((await ctx.store.read({ scope: 'acct_1', key: 'fresh' }))?.state).toBe('complete');
      expect(events.find((e) => e.type === 'purged')?.count).toBe(1);
    });

    it('S14: concurrent retries after expiry never replay the expired result: one runs, the others are told it is in flight', async () => {
      // Several keys at once, so that the race between the takeover and the others' reads is
      // tried many times in one go.
      const keys = Array.from({ length: 6 }, (_, i) => `expiring-${i}`);
      const guard = guardFor();
      await Promise.all(
        keys.map((key) => guard.run(call(key, async () => `old ${key}`, { retention: 200 }))),
      );
      await sleep(350);
      const runs = new Map<string, number>();
      const outcomes = await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: 8 }, () =>
            guard
              .run(
                call(
                  key,
                  async (tx) => {
                    runs.set(key, (runs.get(key) ?? 0) + 1);
                    await ctx.insertPayment(tx, key);
                    await sleep(20);
                    return `new ${key}`;
                  },
                  { retention: 60_000 },
                ),
              )
              .then((r) => ({ key, value: r.value, replayed: r.replayed }))
              .catch((e) => ({ key, code: IdempotencyError.is(e) ? e.code : String(e) })),
          ),
        ),
      );
      expect(outcomes.filter((o) => 'value' in o && o.value.startsWith('old'))).toEqual([]);
      expect(outcomes.filter((o) => 'code' in o && o.code !== 'IDEMPOTENCY_KEY_IN_USE')).toEqual(
        [],
      );
      for (const key of keys) expect(runs.get(key), key).toBe(1);
      expect(await ctx.countPayments()).toBe(keys.length);
    });

    it('S6/S11/S14: a dead in-flight claim past its whole expiry counts as absent: a request of any fingerprint claims it', async () => {
      const dead = await ctx.store.claim({
        scope: 'acct_1',
        key: 'k1',
        fingerprint: 'fp-a',
        operation: 'createPayment',
        leaseMs: 100,
        retentionMs: 100,
      });
      expect(dead.status).toBe('claimed');
      await sleep(PAST_LEASE);
      const fresh = await guardFor().run(
        call(
          'k1',
          async (tx) => {
            await ctx.insertPayment(tx, 'p1');
            return 'b';
          },
          { fingerprint: 'fp-b' },
        ),
      );
      expect(fresh).toEqual({ value: 'b', replayed: false });
      expect(await ctx.countPayments()).toBe(1);
    });

    it('S6/S11: an in-flight claim whose lease expired (not past its expiry) is never claimed by another fingerprint, even by claims racing each other', async () => {
      const claim = (fingerprint: string, leaseMs = 1) =>
        ctx.store.claim({
          scope: 'acct_1',
          key: 'k1',
          fingerprint,
          operation: 'createPayment',
          leaseMs,
          retentionMs: 60_000,
        });
      expect((await claim('fp-a', SHORT_LEASE)).status).toBe('claimed');
      await sleep(PAST_LEASE);
      const other = await claim('fp-b');
      expect(other).toMatchObject({ status: 'exists', record: { fingerprint: 'fp-a' } });
      // Racing claims of both fingerprints over a record that anyone may claim (complete and
      // past retention), with leases of 1 ms: once one of them holds it, the record is that
      // fingerprint's in-flight claim until its expiry, so every claim that succeeds in a
      // round must carry the same fingerprint as the first.
      for (let round = 0; round < 5; round++) {
        const key = `race-${round}`;
        const first = await ctx.store.claim({
          scope: 'acct_1',
          key,
          fingerprint: 'fp-old',
          operation: 'createPayment',
          leaseMs: 30_000,
          retentionMs: 1,
        });
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await ctx.store.complete(
          { scope: 'acct_1', key, token: first.token },
          { result: '"old"', outcome: 'committed', retentionMs: 1 },
        );
        await sleep(20);
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, i) => {
            const fingerprint = i % 2 === 0 ? 'fp-a' : 'fp-b';
            return ctx.store
              .claim({
                scope: 'acct_1',
                key,
                fingerprint,
                operation: 'createPayment',
                leaseMs: 1,
                retentionMs: 60_000,
              })
              .then((result) => ({ fingerprint, result }));
          }),
        );
        const winners = new Set(
          results.filter((r) => r.result.status === 'claimed').map((r) => r.fingerprint),
        );
        expect(winners.size, `round ${round}`).toBe(1);
      }
    });

    it('S14: purge works in bounded batches and says how many it deleted', async () => {
      const guard = guardFor();
      await Promise.all(
        Array.from({ length: 7 }, (_, i) =>
          guard.run(call(`k${i}`, async () => i, { retention: 50 })),
        ),
      );
      await sleep(200);
      expect(await guard.purge({ batchSize: 3, maxBatches: 2 })).toBe(6);
      expect(await guard.purge({ batchSize: 3 })).toBe(1);
      expect(await guard.purge()).toBe(0);
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
      const broken = await target.unreachable();
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
      const guard = guardFor();
      const a = await guard.run(call('shared', async () => 'for a', { scope: 'acct_a' }));
      const b = await guard.run(
        call('shared', async () => 'for b', { scope: 'acct_b', fingerprint: 'fp-other' }),
      );
      expect(a).toEqual({ value: 'for a', replayed: false });
      expect(b).toEqual({ value: 'for b', replayed: false });
    });

    it('S10: with `wait`, a duplicate waits for the first to finish and replays its result', async () => {
      const claim = await claimAsAnotherRequest();
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      setTimeout(() => {
        void ctx.store.complete(
          { scope: 'acct_1', key: 'k1', token: claim.token },
          {
            result: jsonSerializer.stringify({ id: 'first' }),
            outcome: 'committed',
            retentionMs: 60_000,
          },
        );
      }, 150);
      const waited = await guardFor({ wait: 3_000 }).run(
        call('k1', async () => ({ id: 'second' })),
      );
      expect(waited).toEqual({ value: { id: 'first' }, replayed: true });
    });

    /**
     * Fires `count` identical calls at once (Promise.all), spread over `guards`, each writing
     * one business row; returns how the work ran and what each caller was answered.
     */
    async function fireIdentical(guards: Guard<Tx>[], key: string, count: number) {
      let runs = 0;
      const outcomes = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          guards[i % guards.length]!.run(
            call(key, async (tx) => {
              runs++;
              await ctx.insertPayment(tx, key);
              await sleep(20);
              return 'paid';
            }),
          )
            .then((r) => (r.replayed ? 'replayed' : 'fresh'))
            .catch((e) => (IdempotencyError.is(e) ? e.code : `unexpected: ${e}`)),
        ),
      );
      return { runs, outcomes };
    }
    const allowed = ['fresh', 'replayed', 'IDEMPOTENCY_KEY_IN_USE'];

    it('S7: 50 identical calls at once run the mutation exactly once; the rest replay or get 409', async () => {
      const { runs, outcomes } = await fireIdentical([guardFor()], 'storm', 50);
      expect(runs).toBe(1);
      expect(await ctx.countPayments()).toBe(1);
      expect(outcomes.filter((o) => o === 'fresh')).toHaveLength(1);
      expect(outcomes.every((o) => allowed.includes(o))).toBe(true);
    });

    it('S7: 50 distinct keys at once each run exactly once', async () => {
      const guard = guardFor();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          guard.run(
            call(`key-${i}`, async (tx) => {
              await ctx.insertPayment(tx, `p${i}`);
              return i;
            }),
          ),
        ),
      );
      expect(results.map((r) => r.value)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(await ctx.countPayments()).toBe(50);
    });

    it.skipIf(Boolean(target.skipMultiConnection))(
      `S7: 60 identical calls at once through two connection pools run once${target.skipMultiConnection ? ` (skipped: ${target.skipMultiConnection})` : ''}`,
      async () => {
        if (!ctx.secondStore) throw new Error(`${target.name} has no second connection pool`);
        const guards = [guardFor(), createGuard<Tx>({ store: await ctx.secondStore() })];
        const { runs, outcomes } = await fireIdentical(guards, 'two-pools', 60);
        expect(runs).toBe(1);
        expect(await ctx.countPayments()).toBe(1);
        expect(outcomes.filter((o) => o === 'fresh')).toHaveLength(1);
        expect(outcomes.every((o) => allowed.includes(o))).toBe(true);
      },
    );

    it('S25/S26: events carry durations and a key hash, never the raw key', async () => {
      const guard = guardFor();
      const key = 'secret-key-0123456789';
      await guard.run(call(key, async () => 'v'));
      await guard.run(call(key, async () => 'v'));
      await guard.run(call(key, async () => 'v', { fingerprint: 'fp-b' })).catch(() => {});
      expect(events.map((e) => e.type)).toEqual(['claimed', 'completed', 'replayed', 'reused']);
      for (const event of events) {
        expect(event.operation).toBe('createPayment');
        expect(event.keyHash).toMatch(/^[0-9a-f]{12}$/);
        expect(event.durationMs).toBeGreaterThanOrEqual(0);
      }
      expect(JSON.stringify(events)).not.toContain(key);
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A copy of a store's methods bound to it, so a test can override one. */
function bindAll<Tx>(store: IdempotencyStore<Tx>): IdempotencyStore<Tx> {
  return {
    claim: store.claim.bind(store),
    transaction: store.transaction.bind(store),
    complete: store.complete.bind(store),
    release: store.release.bind(store),
    purge: store.purge.bind(store),
  };
}
