/**
 * A slow original and a retry (SPEC S8, S10, S11): the original's transaction holds its key
 * however long its work runs (the key's lock on Postgres, the write lock and the connection
 * lock on SQLite), so the retry answers 409 at once, exactly one payment commits, and the
 * original's answer replays. SQLite runs on a file with a hand-driven clock that jumps while
 * the original runs; Postgres on the database's clock: the real server through each driver
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

const pg = await postgresAvailability();
/** How long the original stalls inside its work (and the SQLite clock jumps meanwhile). */
const STALL = 300;

for (const store of IN_PROCESS_STORES) {
  const { name, postgres } = store;
  const onServer = needsServer(store);
  const skip = onServer && !pg.realPostgres;
  describe.skipIf(skip)(`a slow original on ${name} ${skip ? pg.skipReason : ''}`, () => {
    const clock = { time: 1_700_000_000_000 };
    let backend: Backend;
    let table: string;
    /** Time passes while the original runs: the clock jumps on SQLite, real time on Postgres. */
    const stall = async () => {
      if (!postgres) clock.time += 2 * STALL;
      else await sleep(STALL);
    };
    beforeEach(async () => {
      table = uniqueTableName('rel_slow');
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

    it('S8/S10/S11: original stalls inside its transaction; the retry answers 409 at once; one payment, the original answer replays', async () => {
      const inWork = deferred();
      const gate = deferred();
      const guard = createGuard({ store: backend.store });
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
      await stall();
      // All answer 409 at once (S10): on the Postgres server the key's lock is taken; on
      // PGlite the store knows the key's transaction runs (its one connection is busy with
      // it); on SQLite the process's ledger holds the key for its open transaction.
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
