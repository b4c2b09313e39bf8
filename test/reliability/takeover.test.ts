/**
 * Takeover (SPEC S8, S11): an original slower than its lease, and a retry. Two
 * ways to be slow: before its transaction begins (the retry takes over, the original's
 * fenced transaction then refuses to run), and inside its transaction (the claim is held:
 * row lock on Postgres, the connection lock on SQLite, so the retry cannot take over).
 * Either way exactly one payment commits. SQLite runs on a file with a hand-driven clock;
 * Postgres on the database's clock with a short lease: the real server through each driver
 * (also on sessions defaulting to SERIALIZABLE, S24), and PGlite (one connection in this
 * process: its retry of a key whose transaction runs is answered 409 from memory).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { postgresAvailability, TEST_DATABASE_URL, uniqueTableName } from '../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  IN_PROCESS_STORES,
  migratePostgresTables,
  needsServer,
  openBackend,
  targetConfig,
  tempSqliteFile,
} from './support/backend.js';
import { instrument } from './support/instrument.js';

const pg = await postgresAvailability();
const LEASE = 300;

for (const store of IN_PROCESS_STORES) {
  const { name, postgres } = store;
  const onServer = needsServer(store);
  const skip = onServer && !pg.realPostgres;
  describe.skipIf(skip)(`takeover on ${name} ${skip ? pg.skipReason : ''}`, () => {
    const clock = { time: 1_700_000_000_000 };
    let backend: Backend;
    let table: string;
    /** Makes the lease run out: the clock jumps on SQLite, real time passes on Postgres. */
    const expireLease = async () => {
      if (!postgres) clock.time += 2 * LEASE;
      else await sleep(LEASE + 150);
    };
    beforeEach(async () => {
      table = uniqueTableName('rel_takeover');
      if (onServer) await migratePostgresTables(TEST_DATABASE_URL, table);
      backend = await openBackend({
        kind: postgres ? 'postgres' : 'sqlite',
        table,
        location: postgres ? TEST_DATABASE_URL : tempSqliteFile(),
        now: () => clock.time,
        ...(postgres ? targetConfig(postgres) : {}),
      });
    });
    afterEach(async () => {
      await backend.close();
      if (onServer) await dropPostgresTables(TEST_DATABASE_URL, table);
    });

    const payment = (label: string) => ({
      scope: 'acct_1',
      key: 'slow-key',
      fingerprint: 'fp',
      operation: 'pay',
      work: async (tx: unknown) => ({
        label,
        id: await backend.insertPayment(tx, { scope: 'acct_1', key: 'slow-key', amount: 1 }),
      }),
    });

    it('S8/S11: original stalls after its claim past the lease; the retry takes over and commits; the original is fenced out (409) and never runs', async () => {
      const gate = deferred();
      const stalled = deferred();
      const slow = createGuard({
        store: instrument(backend.store, {
          beforeTransaction: async () => {
            stalled.resolve();
            await gate.promise;
          },
        }),
        lease: LEASE,
      });
      const fast = createGuard({ store: backend.store, lease: LEASE });
      let originalRan = false;
      const original = slow.run({
        ...payment('original'),
        work: async () => {
          originalRan = true;
          return { label: 'original', id: -1 };
        },
      });
      await stalled.promise;
      await expireLease();
      const retry = await fast.run(payment('retry'));
      gate.resolve();
      const error = await original.then(
        () => undefined,
        (e: unknown) => e,
      );

      expect(retry).toMatchObject({ replayed: false, value: { label: 'retry' } });
      expect(IdempotencyError.is(error) && error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(originalRan).toBe(false);
      expect((await backend.payments()).length).toBe(1);
      expect(await fast.run(payment('again'))).toEqual({ replayed: true, value: retry.value });
    });

    it('S8/S11: original stalls inside its transaction past the lease; the retry cannot take over; one payment, the original answer replays', async () => {
      const inWork = deferred();
      const gate = deferred();
      const guard = createGuard({ store: backend.store, lease: LEASE });
      const original = guard.run({
        ...payment('original'),
        work: async (tx) => {
          const id = await backend.insertPayment(tx, {
            scope: 'acct_1',
            key: 'slow-key',
            amount: 1,
          });
          inWork.resolve();
          await gate.promise;
          return { label: 'original', id };
        },
      });
      await inWork.promise;
      await expireLease();
      // All answer 409 at once (S10): on the Postgres server the takeover skips the locked
      // row; on PGlite the store knows the key's transaction runs (its one connection is
      // busy with it); on SQLite the claim is held by its open transaction, whatever its
      // lease says.
      const early = await guard.run(payment('retry')).then(
        (result) => result,
        (e: unknown) => e,
      );
      expect(IdempotencyError.is(early) && early.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      gate.resolve();
      const first = await original;
      expect(first).toMatchObject({ replayed: false, value: { label: 'original' } });
      expect((await backend.payments()).length).toBe(1);
      expect(await guard.run(payment('again'))).toEqual({ replayed: true, value: first.value });
    });
  });
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
