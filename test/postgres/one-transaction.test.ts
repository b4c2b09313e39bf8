/**
 * How a Postgres key is held (SPEC S6, S7, S8, S10, S11, S24): by the
 * transaction that runs its work, through the key's advisory lock, and the primary key decides
 * who commits. On every server driver (node-postgres, postgres.js, each again on sessions
 * defaulting to SERIALIZABLE); PGlite has one connection, so nothing in it runs at the same
 * time (test/postgres/pglite.test.ts covers its duplicates).
 *
 * - a duplicate from another process (here: another connection pool, which shares nothing in
 *   memory with the first) answers at once while the original runs: 409 for the same request,
 *   422 for another;
 * - where advisory locks do nothing (CockroachDB's were stubs that return true until its 2026
 *   releases; here a schema on the search path shadows the server's function), duplicates all
 *   run, and still exactly one business effect commits;
 * - a process that dies frees its key at once: nothing to wait out.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { deferred } from '../support/deferred.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  SERVER_DRIVERS,
  type TestDb,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a guarded call came to, in a word: `fresh:<value>`, `replayed:<value>` or its code. */
async function outcomeOf(call: Promise<{ value: unknown; replayed: boolean }>): Promise<string> {
  try {
    const { value, replayed } = await call;
    return `${replayed ? 'replayed' : 'fresh'}:${String(value)}`;
  } catch (error) {
    return IdempotencyError.is(error) ? error.code : `error: ${String(error)}`;
  }
}

for (const driver of SERVER_DRIVERS) {
  describe.skipIf(!pg.realPostgres)(
    `${driver.name}: the key held by its transaction${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
    () => {
      const table = uniqueTableName('one_tx');
      const business = `${table}_business`;
      /** The shadowing schema: `pg_try_advisory_xact_lock(bigint)` that always says yes. */
      const noLocks = `${table}_nolocks`;
      let admin: TestDb<AnyPgDatabase>;
      /** Two processes, as far as the store can tell: two pools, nothing shared in memory. */
      let first: TestDb<AnyPgDatabase>;
      let second: TestDb<AnyPgDatabase>;

      beforeAll(async () => {
        admin = createNodePgDb({ max: 2 });
        first = driver.open();
        second = driver.open();
        await migratePostgres(admin.db, { table });
        await admin.db.execute(sql.raw(`create table "${business}" (id text primary key)`));
        await admin.db.execute(sql.raw(`create schema "${noLocks}"`));
        await admin.db.execute(
          sql.raw(`create function "${noLocks}".pg_try_advisory_xact_lock(bigint)
            returns boolean language sql as 'select true'`),
        );
      });
      afterAll(async () => {
        await Promise.all([first.close(), second.close()]);
        await dropRecordsTable(admin.db, table, business);
        await admin.db.execute(sql.raw(`drop schema if exists "${noLocks}" cascade`));
        await admin.close();
      });

      const payments = async (id: string) =>
        rowsOf<{ n: number }>(
          await admin.db.execute(
            sql`select count(*)::int as n from ${sql.identifier(business)} where id = ${id}`,
          ),
        )[0]?.n;

      /** A guarded payment of `key` on `db`: its work inserts the row and returns `label`. */
      const pay = (
        db: AnyPgDatabase,
        key: string,
        options: { fingerprint?: string; label?: string; during?: () => Promise<void> } = {},
      ) =>
        createGuard({ store: postgresStore(db, { table }) }).run({
          scope: 'acct',
          key,
          fingerprint: options.fingerprint ?? 'f',
          operation: 'pay',
          work: async (tx: AnyPgDatabase) => {
            await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${key})`);
            await options.during?.();
            return options.label ?? key;
          },
        });

      it('S6/S10: while the original runs, duplicates from another process answer at once: 409 (Retry-After 1) for the same request, 422 for another', async () => {
        const key = 'in-flight';
        const running = deferred();
        const gate = deferred();
        const original = pay(first.db, key, {
          label: 'original',
          during: async () => {
            running.resolve();
            await gate.promise;
          },
        });
        await running.promise;
        let duplicates: unknown[];
        let alone: string;
        try {
          // All at once, and all answered while the original still holds its transaction
          // open: were any of them waiting for it, this would never settle.
          duplicates = await Promise.all([
            ...Array.from({ length: 6 }, () => pay(second.db, key).catch((e: unknown) => e)),
            ...Array.from({ length: 6 }, () =>
              pay(second.db, key, { fingerprint: 'other' }).catch((e: unknown) => e),
            ),
          ]);
          // Another request alone, the original still running: 422. It may meet the lock of
          // a duplicate above whose transaction is still ending (on a node-postgres Pool its
          // ROLLBACK goes after its answer): then 409, and a retry, as a client's, gets 422.
          alone = await outcomeOf(pay(second.db, key, { fingerprint: 'other' }));
          for (let retry = 0; alone === 'IDEMPOTENCY_KEY_IN_USE' && retry < 20; retry++) {
            await sleep(25);
            alone = await outcomeOf(pay(second.db, key, { fingerprint: 'other' }));
          }
        } finally {
          gate.resolve();
        }
        expect(alone).toBe('IDEMPOTENCY_KEY_REUSED');
        const codes = duplicates.map((d) => (IdempotencyError.is(d) ? d.code : d));
        // Never 422 for the same request. Another request's duplicates that meet each other
        // at that moment may be told 409 instead (a retry then gets the 422): one of them is
        // answering, and holds its request's lock for that long.
        expect(codes.slice(0, 6)).toEqual(Array(6).fill('IDEMPOTENCY_KEY_IN_USE'));
        for (const code of codes.slice(6)) {
          expect(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE']).toContain(code);
        }
        expect(codes.slice(6)).toContain('IDEMPOTENCY_KEY_REUSED');
        const inUse = duplicates[0] as IdempotencyError;
        expect(inUse.retryAfterSeconds).toBe(1);
        expect(await original).toEqual({ value: 'original', replayed: false });
        expect(await pay(second.db, key)).toEqual({ value: 'original', replayed: true });
        expect(await payments(key)).toBe(1);
      });

      it('S7/S8: where advisory locks do nothing, duplicates fired at once all run their work, and exactly one business effect commits; the rest get 409 or the replay', async () => {
        // Ten "processes", each a pool of its own whose sessions find the stub first.
        const pools = Array.from({ length: 10 }, () =>
          driver.open({ max: 1, searchPath: `"${noLocks}", pg_catalog, public` }),
        );
        try {
          // The stub is in effect: two sessions both "take" the same lock at once.
          const [a, b] = pools;
          const both = await Promise.all(
            [a!, b!].map((p) =>
              p.db.transaction(async (tx) => {
                const [row] = rowsOf<{ got: boolean }>(
                  await tx.execute(sql`select pg_try_advisory_xact_lock(42) as got`),
                );
                await sleep(50);
                return row?.got;
              }),
            ),
          );
          expect(both).toEqual([true, true]);

          const key = 'no-locks';
          let started = 0;
          const outcomes = await Promise.all(
            pools.map((p, i) =>
              outcomeOf(
                createGuard({ store: postgresStore(p.db, { table }) }).run({
                  scope: 'acct',
                  key,
                  fingerprint: 'f',
                  operation: 'pay',
                  work: async (tx: AnyPgDatabase) => {
                    // Wait until another run has started too (or a while): a real lock lets
                    // only one in, the stub lets them all.
                    started++;
                    for (let waited = 0; started < 2 && waited < 1000; waited += 10) {
                      await sleep(10);
                    }
                    // A payment of its own (as a serial id would be): nothing of the
                    // business schema stops a second one, only the record's primary key.
                    await tx.execute(
                      sql`insert into ${sql.identifier(business)} (id) values (${`${key}:${i}`})`,
                    );
                    return `run-${i}`;
                  },
                }),
              ),
            ),
          );
          expect(started).toBeGreaterThan(1);
          const fresh = outcomes.filter((o) => o.startsWith('fresh:'));
          expect(fresh).toHaveLength(1);
          const winner = fresh[0]!.slice('fresh:'.length);
          for (const outcome of outcomes) {
            expect([`fresh:${winner}`, `replayed:${winner}`, 'IDEMPOTENCY_KEY_IN_USE']).toContain(
              outcome,
            );
          }
          const [committed] = rowsOf<{ ids: string[] }>(
            await admin.db.execute(
              sql`select array_agg(id) as ids from ${sql.identifier(business)} where id like ${`${key}:%`}`,
            ),
          );
          expect(committed?.ids).toEqual([`${key}:${winner.slice('run-'.length)}`]);
          expect(await outcomeOf(pay(second.db, key))).toBe(`replayed:${winner}`);
        } finally {
          await Promise.all(pools.map((p) => p.close()));
        }
      });

      it('S11: a process that dies frees its key at once: its transaction ends with its connection, a retry runs, and only the retry commits', async () => {
        const key = 'crashed';
        const running = deferred<number>();
        const never = deferred();
        const doomed = driver.open({ max: 1 });
        const original = outcomeOf(
          createGuard({ store: postgresStore(doomed.db, { table }) }).run({
            scope: 'acct',
            key,
            fingerprint: 'f',
            operation: 'pay',
            work: async (tx: AnyPgDatabase) => {
              await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${key})`);
              const [row] = rowsOf<{ pid: number }>(
                await tx.execute(sql`select pg_backend_pid() as pid`),
              );
              running.resolve(row!.pid);
              await never.promise;
              return 'original';
            },
          }),
        );
        const pid = await running.promise;
        // The process is gone as far as the server can tell (as when it is killed: its
        // socket closes, the server ends the backend and its transaction).
        await admin.db.execute(sql`select pg_terminate_backend(${pid})`);
        for (let i = 0; i < 100; i++) {
          const [row] = rowsOf<{ alive: boolean }>(
            await admin.db.execute(
              sql`select exists (select 1 from pg_stat_activity where pid = ${pid}) as alive`,
            ),
          );
          if (!row?.alive) break;
          await sleep(20);
        }
        const started = Date.now();
        expect(await pay(second.db, key, { label: 'retry' })).toEqual({
          value: 'retry',
          replayed: false,
        });
        // At once: nothing was waited out.
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(await payments(key)).toBe(1);
        never.resolve();
        expect(await original).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(await payments(key)).toBe(1);
        expect(await pay(second.db, key)).toEqual({ value: 'retry', replayed: true });
        await doomed.close();
      });
    },
  );
}
