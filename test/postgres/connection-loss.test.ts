/**
 * A connection lost under a running guarded transaction (SPEC S8, S11, S15, S24), on both
 * multi-connection drivers, each also on sessions defaulting to SERIALIZABLE (PGlite has no
 * connection to lose): the link cut mid-transaction (a TCP proxy), the backend
 * terminated by an operator (`pg_terminate_backend`), and the server's own
 * `idle_in_transaction_session_timeout`. Whatever the driver does with its transaction, the
 * mutation must answer 503 only once its work is over, the key must stay held until then
 * (a concurrent retry gets 409), nothing of the work may commit, the process must live (an
 * uncaught exception here fails the vitest run even if every assertion passed), and a retry
 * afterwards runs once.
 */
import { inspect } from 'node:util';
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

/** How each fault takes the connection of the running transaction away. */
type Fault = (context: { pid: number; proxy: FaultProxy; tx: AnyPgDatabase }) => Promise<void>;
const faults: { name: string; fault: Fault }[] = [
  {
    name: 'the link is cut (the proxy closes it: a FIN)',
    fault: async ({ proxy }) => proxy.cutAll(),
  },
  {
    name: 'the backend is terminated (pg_terminate_backend)',
    fault: async ({ pid }) => {
      const killer = createNodePgDb({ max: 1 });
      try {
        await killer.db.execute(sql`select pg_terminate_backend(${pid})`);
      } finally {
        await killer.close();
      }
    },
  },
  {
    name: 'the server ends an idle transaction (idle_in_transaction_session_timeout)',
    fault: async ({ tx }) => {
      await tx.execute(sql.raw(`set local idle_in_transaction_session_timeout = 50`));
    },
  },
];

for (const driver of SERVER_DRIVERS) {
  describe.skipIf(!pg.realPostgres)(
    `${driver.name}: connection loss mid-transaction${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
    () => {
      const table = uniqueTableName('connloss');
      const business = `${table}_business`;
      let proxy: FaultProxy;
      let direct: TestDb<AnyPgDatabase>;
      let proxied: TestDb<AnyPgDatabase>;

      beforeAll(async () => {
        proxy = await startFaultProxy({ host: '127.0.0.1', port: 5432 });
        direct = createNodePgDb();
        proxied = driver.open({ url: `postgres://postgres@127.0.0.1:${proxy.port}/test` });
        await migratePostgres(direct.db, { table });
        await direct.db.execute(sql.raw(`CREATE TABLE "${business}" (id text PRIMARY KEY)`));
      });
      afterAll(async () => {
        await proxied.close();
        await dropRecordsTable(direct.db, table, business);
        await direct.close();
        await proxy.close();
      });

      const count = async (id: string) =>
        rowsOf<{ n: number }>(
          await direct.db.execute(
            sql`SELECT count(*)::int AS n FROM ${sql.identifier(business)} WHERE id = ${id}`,
          ),
        )[0]?.n;

      for (const { name, fault } of faults) {
        it(`S11/S15/S24: ${name} while the work awaits: 503 only after the work ends, the key held until then, nothing committed, a retry runs once`, async () => {
          const guard = createGuard({ store: postgresStore(proxied.db, { table }) });
          const key = `k-${faults.findIndex((f) => f.name === name)}`;
          let runs = 0;
          let workEnded = 0;
          const call = (work: (tx: AnyPgDatabase) => Promise<string>) => ({
            scope: 's',
            key,
            fingerprint: 'f',
            operation: 'pay',
            work: work as never,
          });
          let faulted!: () => void;
          const faultDone = new Promise<void>((resolve) => {
            faulted = resolve;
          });
          const first = guard
            .run(
              call(async (tx) => {
                runs++;
                await tx.execute(sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${key})`);
                const [row] = rowsOf<{ pid: number }>(
                  await tx.execute(sql`select pg_backend_pid() as pid`),
                );
                await fault({ pid: row!.pid, proxy, tx });
                faulted();
                // The card processor takes its time; the connection is gone meanwhile.
                await sleep(700);
                workEnded = Date.now();
                return 'first';
              }),
            )
            .then(
              (value) => ({ value, at: Date.now() }),
              (error: unknown) => ({ error, at: Date.now() }),
            );
          await faultDone;
          await sleep(200);
          // The work still runs: its key must still be held (409), never claimed afresh.
          const during = await guard
            .run(call(async () => `ran ${++runs}`))
            .catch((error: unknown) => error);
          expect(IdempotencyError.is(during) && during.code).toBe('IDEMPOTENCY_KEY_IN_USE');

          const outcome = await first;
          expect(
            'error' in outcome && IdempotencyError.is(outcome.error) && outcome.error.code,
          ).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
          expect(workEnded).toBeGreaterThan(0);
          expect(outcome.at).toBeGreaterThanOrEqual(workEnded);
          expect(await count(key)).toBe(0);
          expect(runs).toBe(1);

          const retry = await guard.run(
            call(async (tx) => {
              runs++;
              await tx.execute(sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${key})`);
              return 'retry';
            }),
          );
          expect(retry).toEqual({ value: 'retry', replayed: false });
          expect(runs).toBe(2);
          expect(await count(key)).toBe(1);
          // Let a late driver callback (a write on the dead socket) fire within this test.
          await sleep(50);
        }, 15_000);
      }

      it('S26: a statement refused after the connection went carries no raw key or parameter on its 503, even when the work catches the first failure and tries again', async () => {
        const guard = createGuard({ store: postgresStore(proxied.db, { table }) });
        const key = `secret-key-${Date.now()}`;
        const attempt = (tx: AnyPgDatabase) =>
          tx.execute(sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${key})`);
        const error = await guard
          .run({
            scope: 's',
            key,
            fingerprint: 'f',
            operation: 'pay',
            work: (async (tx: AnyPgDatabase) => {
              const [row] = rowsOf<{ pid: number }>(
                await tx.execute(sql`select pg_backend_pid() as pid`),
              );
              await faults[1]!.fault({ pid: row!.pid, proxy, tx });
              // The first statement sees the connection go; its driver error lists the key.
              await attempt(tx).catch(() => {});
              await sleep(50);
              // The next one is refused by the store, with that error as its reason.
              await attempt(tx);
              return 'unreachable';
            }) as never,
          })
          .catch((e: unknown) => e);
        expect(IdempotencyError.is(error) && error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(inspect(error, { depth: 12 })).not.toContain(key);
        expect(JSON.stringify(error)).not.toContain(key);
      }, 15_000);
    },
  );
}
