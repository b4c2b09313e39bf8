/**
 * A TCP reset (RST) under a statement of the guarded transaction (SPEC S8, S15, S24), on both
 * multi-connection drivers, also on sessions defaulting to SERIALIZABLE. A server that dies
 * with unread data in its socket (a crash, `pg_ctl stop -m immediate`) or a middlebox that
 * drops the link resets the connection rather than closing it.
 *
 * The mutation answers 503 and commits nothing, and then the pool's connection must work
 * again once the link is back: the pool here has one connection, so the next mutation and
 * the retry get the very connection that was reset. On postgres.js 3.4.9 a statement (or its
 * own ROLLBACK) written between the socket's 'error' and its 'close' leaves that connection
 * unable to send anything ever again (src/postgres/transaction.ts): every later query on it
 * failed with CONNECT_TIMEOUT, and the store answered 503 long after the database was back.
 * PGlite has no connection to reset.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  SERVER_DRIVERS,
  type TestDb,
  uniqueTableName,
} from '../support/postgres.js';
import { type FaultProxy, startFaultProxy } from '../support/tcp-proxy.js';

const pg = await postgresAvailability();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const driver of SERVER_DRIVERS) {
  describe.skipIf(!pg.realPostgres)(
    `${driver.name}: a connection reset under a statement of the guarded transaction${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
    () => {
      const table = uniqueTableName('connreset');
      const business = sql.identifier(`${table}_business`);
      let proxy: FaultProxy;
      let direct: TestDb<AnyPgDatabase>;
      let proxied: TestDb<AnyPgDatabase>;

      beforeAll(async () => {
        proxy = await startFaultProxy({ host: '127.0.0.1', port: 5432 });
        direct = createNodePgDb({ max: 2 });
        // One connection, so that every call after the reset runs on the connection that was
        // reset; a connection that never comes back then fails in seconds, within the test.
        proxied = driver.open({
          url: `postgres://postgres@127.0.0.1:${proxy.port}/test`,
          max: 1,
          connectTimeout: 3,
        });
        await migratePostgres(direct.db, { table });
        await direct.db.execute(sql`create table ${business} (id text primary key)`);
      });
      afterAll(async () => {
        await proxied?.close();
        if (direct) await dropRecordsTable(direct.db, table, `${table}_business`);
        await direct?.close();
        await proxy?.close();
      });

      const count = async (id: string) =>
        rowsOf<{ n: number }>(
          await direct.db.execute(sql`select count(*)::int as n from ${business} where id = ${id}`),
        )[0]?.n;

      /** The backend running a statement whose text contains `tag`, once it runs. */
      const backendRunning = async (tag: string): Promise<number> => {
        for (;;) {
          // The pattern is a parameter, so this query's own text never matches it.
          const [row] = rowsOf<{ pid: number }>(
            await direct.db.execute(
              sql`select pid from pg_stat_activity where state = 'active' and query like ${`%${tag}%`}`,
            ),
          );
          if (row) return row.pid;
          await sleep(20);
        }
      };

      it('S8/S15/S24: 503 and nothing committed; then the same connection runs the next mutation and the retry', async () => {
        const guard = createGuard({ store: postgresStore(proxied.db, { table }) });
        const tag = `reset_${randomBytes(6).toString('hex')}`;
        const call = (key: string, label: string, wait = false) => ({
          scope: 's',
          key,
          fingerprint: 'f',
          operation: 'pay',
          work: async (tx: AnyPgDatabase) => {
            await tx.execute(sql`insert into ${business} (id) values (${key})`);
            // Still running when the link is reset.
            if (wait) await tx.execute(sql.raw(`select pg_sleep(30) /* ${tag} */`));
            return label;
          },
        });

        const first = guard.run(call('k-1', 'first', true)).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        const pid = await backendRunning(tag);
        proxy.resetAll();
        // The server would notice the dead peer only when it next writes; end its backend
        // now (its transaction rolls back, its row lock goes) instead of in 30 s.
        await direct.db.execute(sql`select pg_terminate_backend(${pid})`);

        const outcome = await first;
        expect('error' in outcome && IdempotencyError.is(outcome.error) && outcome.error.code).toBe(
          'IDEMPOTENCY_STORE_UNAVAILABLE',
        );
        expect(await count('k-1')).toBe(0);

        // The pool's only connection is the one that was reset.
        expect(await guard.run(call('k-2', 'next'))).toEqual({ value: 'next', replayed: false });
        expect(await guard.run(call('k-1', 'retry'))).toEqual({ value: 'retry', replayed: false });
        expect(await count('k-1')).toBe(1);
        expect(await count('k-2')).toBe(1);
      }, 20_000);
    },
  );
}
