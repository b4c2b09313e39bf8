/**
 * node-postgres: a guarded transaction whose BEGIN fails on a dead connection still gives its
 * client back to the pool (SPEC S15, S24), and one that fails after its BEGIN went out gives
 * it back with that transaction ended. Drizzle's own `db.transaction` sends BEGIN before
 * its try/finally, so such a client was never released: every blip took one slot of the pool
 * for good, and once the pool was drained every guarded mutation answered 503 long after the
 * database was back (and `pool.end()` never returned).
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  uniqueTableName,
} from '../support/postgres.js';

const pg_ = await postgresAvailability();

/** A pg.Client whose connection dies just as it sends the next BEGIN, when told to. */
class DyingClient extends pg.Client {
  static dieAtNextBegin = 0;
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloaded query signature.
  override query(...args: any[]): any {
    const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
    if (DyingClient.dieAtNextBegin > 0 && /^\s*begin/i.test(String(text))) {
      DyingClient.dieAtNextBegin--;
      (
        this as unknown as { connection: { stream: { destroy(): void } } }
      ).connection.stream.destroy();
    }
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (super.query as any)(...args);
  }
}

describe.skipIf(!pg_.realPostgres)(
  `node-postgres pool: a failed BEGIN gives its client back${pg_.skipReason ? ` (${pg_.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('pool_release');
    const pool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max: 2,
      connectionTimeoutMillis: 2000,
      Client: DyingClient,
    });
    pool.on('error', () => {});
    const db = drizzle({ client: pool });

    beforeAll(async () => {
      await migratePostgres(db, { table });
    });
    afterAll(async () => {
      await dropRecordsTable(db, table);
      await pool.end();
    });

    /** Guarded calls on `on`'s store whose work counts its runs: the call answers the count. */
    function countingCalls(on: typeof db) {
      const guard = createGuard({ store: postgresStore(on, { table }) });
      let runs = 0;
      const call = (key: string) =>
        guard.run({
          scope: 'acct_1',
          key,
          fingerprint: 'fp',
          operation: 'pay',
          work: async () => ++runs,
        });
      return { call, runs: () => runs };
    }

    it('S15/S24: after more failed BEGINs than the pool has clients, a mutation still runs, and pool.end() returns', async () => {
      const { call, runs } = countingCalls(db);
      // Three failed BEGINs against a pool of two: each answers 503 and runs nothing.
      for (const key of ['blip-1', 'blip-2', 'blip-3']) {
        DyingClient.dieAtNextBegin = 1;
        const error = await call(key).catch((e: unknown) => e);
        expect(IdempotencyError.is(error) && error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      }
      expect(runs()).toBe(0);
      // Leaked clients would make this wait for the pool until connectionTimeoutMillis: 503.
      await expect(call('after-the-blips')).resolves.toEqual({ value: 1, replayed: false });
      // A retry of a blipped key runs once, as a fresh claim.
      await expect(call('blip-1')).resolves.toEqual({ value: 2, replayed: false });
      expect(pool.totalCount - pool.idleCount).toBe(0);
    });

    it("S15/S24: when the work's transaction handle cannot be made after the claim's query went, that transaction ends before its client goes back", async () => {
      const application = `pool_release_${process.pid}_${Date.now()}`;
      const onePool = new pg.Pool({
        connectionString: TEST_DATABASE_URL,
        max: 1,
        application_name: application,
      });
      onTestFinished(() => onePool.end());
      const oneDb = drizzle({ client: onePool });
      const { call, runs } = countingCalls(oneDb);
      // The store makes the work's handle with the session's constructor
      // (src/postgres/pool-transaction.ts): shadow it with one that throws.
      const session = oneDb._.session as unknown as object;
      Object.defineProperty(session, 'constructor', {
        configurable: true,
        value: class {
          constructor() {
            throw new Error('no handle today');
          }
        },
      });
      try {
        const error = await call('no-handle').catch((e: unknown) => e);
        expect(IdempotencyError.is(error) && error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(String((error as Error).cause)).toContain('no handle today');
        expect(runs()).toBe(0);
        expect(onePool.totalCount - onePool.idleCount).toBe(0);
        // Seen from another connection: the pooled one is idle, not idle in the claim's
        // transaction (which would hold the key's locks for whoever takes the client next).
        const states = await pool.query<{ state: string }>(
          'select state from pg_stat_activity where application_name = $1',
          [application],
        );
        expect(states.rows.map((row) => row.state)).toEqual(['idle']);
      } finally {
        Reflect.deleteProperty(session, 'constructor');
      }
      // The key is free: the next call claims it afresh and runs.
      await expect(call('no-handle')).resolves.toEqual({ value: 1, replayed: false });
    });
  },
);
