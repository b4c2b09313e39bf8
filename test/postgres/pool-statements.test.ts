/**
 * node-postgres Pool: the store's own autocommit statements go to the pool itself, not
 * through Drizzle's prepared query (src/postgres/pool-statements.ts), and nothing a user of
 * Drizzle relies on changes with it (SPEC S7, S9, S15, S22):
 *
 * - each statement is one `pool.query` with its values as parameters, in the placeholders'
 *   order; the record it reads comes back with the same types as before;
 * - Drizzle's logger still sees each of them, with the same values;
 * - a missing function still fails closed and says what to do (S15, S22);
 * - a value missing from a call fails before anything is sent.
 *
 * These are the store's own statements (`claim`, `read`, `release`, `purge`): a guarded call
 * uses none of them on Postgres. It claims inside its business transaction (`claimAndRun`),
 * on a client checked out of the pool (src/postgres/pool-transaction.ts, tested in
 * pool-transaction.test.ts); here it is seen replaying, and failing closed without
 * `<table>_begin`.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { functionNames } from '../../src/postgres/functions.js';
import { migratePostgres, type PgTransactionOf, postgresStore } from '../../src/postgres/index.js';
import { poolStatement } from '../../src/postgres/pool-statements.js';
import {
  claimRequests,
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  uniqueTableName,
} from '../support/postgres.js';

const pg_ = await postgresAvailability();

describe.skipIf(!pg_.realPostgres)(
  `node-postgres pool: the store's statements straight to the pool${pg_.skipReason ? ` (${pg_.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('pool_st');
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const logged: { query: string; params: unknown[] }[] = [];
    const db = drizzle({
      client: pool,
      logger: { logQuery: (query, params) => logged.push({ query, params }) },
    });
    /** What `pool.query` was called with: the text, and whether as a query config object. */
    const poolQueries: { text: string; config: boolean }[] = [];
    const query = pool.query.bind(pool);
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloaded query signature.
    (pool as any).query = (...args: any[]) => {
      const config = typeof args[0] !== 'string';
      poolQueries.push({ text: config ? args[0]?.text : args[0], config });
      // biome-ignore lint/suspicious/noExplicitAny: as above.
      return (query as any)(...args);
    };

    beforeAll(async () => {
      await migratePostgres(db, { table });
    });
    afterAll(async () => {
      await dropRecordsTable(db, table);
      await pool.end();
    });

    const claimRequest = claimRequests();
    const request = (key: string) => claimRequest({ key });

    it('S7/S9: a claim is one pool.query, not a Drizzle prepared query, its values in order; the record read back has the same types', async () => {
      const store = postgresStore(db, { table });
      poolQueries.length = 0;
      logged.length = 0;
      const first = await store.claim(request('k1'));
      expect(first).toMatchObject({ status: 'claimed', takenOver: false });
      expect(poolQueries).toHaveLength(1);
      // Drizzle's prepared query would have passed a query config object (with its own type
      // parsers); the pool path passes the text and the values.
      expect(poolQueries[0]).toEqual({
        text: expect.stringContaining(`"${functionNames(table).claim}"(`),
        config: false,
      });
      // Drizzle's logger saw it, with scope, key, fingerprint, operation, token, lease, expiry.
      expect(logged).toHaveLength(1);
      const token = first.status === 'claimed' ? first.token : '';
      expect(logged[0]!.params).toEqual([
        'acct_1',
        'k1',
        'fp-a',
        'createPayment',
        token,
        30_000,
        90_000,
      ]);

      const second = await store.claim(request('k1'));
      if (second.status !== 'exists') throw new Error(`expected the record, got ${second.status}`);
      const { record } = second;
      expect(record).toMatchObject({ state: 'in_flight', outcome: null, result: null });
      for (const time of [record.leaseExpiresAt, record.expiresAt, record.createdAt]) {
        expect(time).toBeInstanceOf(Date);
        expect(Number.isFinite(time!.getTime())).toBe(true);
      }
      const read = await store.read(request('k1'));
      expect(read).toMatchObject({ state: 'in_flight', fingerprint: 'fp-a' });
      // Release and purge answer booleans and counts, not strings.
      expect(await store.release({ scope: 'acct_1', key: 'k1', token })).toBe(true);
      expect(await store.release({ scope: 'acct_1', key: 'k1', token })).toBe(false);
      expect(await store.purge({ batchSize: 10, maxBatches: 1 })).toBe(0);
    });

    it('S9: a replay through the guard on the pool path returns the stored result', async () => {
      const store = postgresStore(db, { table });
      const guard = createGuard<PgTransactionOf<typeof db>>({ store });
      let runs = 0;
      const call = () =>
        guard.run({
          scope: 'acct_1',
          key: 'k2',
          fingerprint: 'fp-a',
          operation: 'createPayment',
          work: async () => ({ run: ++runs, at: '2026-12-01' }),
        });
      const [a, b] = [await call(), await call()];
      expect(a).toEqual({ value: { run: 1, at: '2026-12-01' }, replayed: false });
      expect(b).toEqual({ value: { run: 1, at: '2026-12-01' }, replayed: true });
      expect(runs).toBe(1);
    });

    it('S15/S22: a records table without its functions fails closed, and the error says which and how to add it', async () => {
      const bare = uniqueTableName('pool_st_bare');
      await migratePostgres(db, { table: bare });
      // A guarded call's first statement is the one-transaction claim, `<table>_begin`, sent
      // with BEGIN in the transaction's first query.
      await db.execute(sql.raw(`drop function "${functionNames(bare).begin}"`));
      try {
        const guard = createGuard({ store: postgresStore(db, { table: bare }) });
        let ran = false;
        const failure = await guard
          .run({
            scope: 'acct_1',
            key: 'k3',
            fingerprint: 'fp-a',
            operation: 'createPayment',
            work: async () => {
              ran = true;
              return 1;
            },
          })
          .catch((error: unknown) => error);
        expect(ran).toBe(false);
        expect(IdempotencyError.is(failure)).toBe(true);
        expect((failure as IdempotencyError).code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(String((failure as Error).cause)).toContain(
          `has no function "${functionNames(bare).begin}"`,
        );
        expect(String((failure as Error).cause)).toContain('migratePostgres');
        // S26: the raw key is in no part of what reaches the app.
        expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain('k3');
      } finally {
        await dropRecordsTable(db, bare);
      }
    });

    it('a value missing from a call fails before anything is sent', async () => {
      const statement = poolStatement(db, pool, {
        sql: 'select $1::text as a, $2::text as b',
        params: [sql.placeholder('a'), sql.placeholder('b')],
      });
      poolQueries.length = 0;
      expect(await statement({ a: 'x', b: 'y' })).toEqual([{ a: 'x', b: 'y' }]);
      await expect(statement({ a: 'x' })).rejects.toThrow('no value for the parameter "b"');
      expect(poolQueries).toHaveLength(1);
    });
  },
);
