/**
 * The Postgres server itself crashes under guarded load (SPEC S7, S8, S11, S24), on a private
 * cluster (test/support/private-cluster.ts), once per driver and once more per driver on
 * sessions defaulting to SERIALIZABLE: `pg_ctl stop -m immediate` while payments run, then a
 * restart. PGlite is not here: it has no server to crash (its database is this process).
 * A guarded call is one transaction: a crash loses a call whole (its payment and its record
 * together), never a committed payment, and a payment never commits without its record.
 *
 * After the restart: no key was paid twice; every payment answered 200 before the crash is
 * in the table and its retry replays that very answer (nothing lost); every other key is
 * paid exactly once by its client's retries, each within a few seconds of the restart (the
 * crash freed every key with its connection).
 */
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { createNodePgDb, type TestDb } from '../support/postgres.js';
import {
  createPrivateCluster,
  type PrivateCluster,
  privateClusterAvailability,
} from '../support/private-cluster.js';

const cluster = privateClusterAvailability();
/** How soon after the restart every key must have its final answer (plus reconnect time). */
const SETTLE_MS = 2000;
const CLIENTS = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type DefaultIsolation = 'serializable' | undefined;
const openNodePg = (url: string, defaultIsolation: DefaultIsolation) =>
  createNodePgDb({ url, max: 8, ...(defaultIsolation ? { defaultIsolation } : {}) });
const openPostgresJs = (url: string, defaultIsolation: DefaultIsolation) => {
  // Reconnect promptly once the server is back (postgres.js 3 and 4 back off up to 20 s by
  // default), and no array-type query on connect: a connection cut during it is an
  // unhandled rejection in postgres.js 3.4.9 (porsager/postgres#1192; 4 handles it).
  const client = postgres(url, {
    max: 8,
    backoff: () => 0.1,
    fetch_types: false,
    onnotice: () => {},
    ...(defaultIsolation
      ? { connection: { default_transaction_isolation: defaultIsolation } }
      : {}),
  });
  return { db: drizzlePostgresJs({ client }), close: () => client.end({ timeout: 5 }) };
};
const drivers: { name: string; open(url: string): TestDb<AnyPgDatabase> }[] = [
  { name: 'node-postgres', open: (url) => openNodePg(url, undefined) },
  { name: 'postgres.js', open: (url) => openPostgresJs(url, undefined) },
  {
    name: 'node-postgres, default serializable',
    open: (url) => openNodePg(url, 'serializable'),
  },
  { name: 'postgres.js, default serializable', open: (url) => openPostgresJs(url, 'serializable') },
];

interface Answer {
  key: string;
  outcome: 'paid' | 'replayed' | string;
  paymentId?: string;
}

describe.skipIf(!cluster.bin)(
  `a Postgres server crash (pg_ctl stop -m immediate) under guarded load${cluster.skipReason ? ` (${cluster.skipReason})` : ''}`,
  () => {
    let server: PrivateCluster;
    beforeAll(async () => {
      server = await createPrivateCluster(cluster.bin!);
    }, 60_000);
    afterAll(async () => {
      await server?.destroy();
    });

    for (const driver of drivers) {
      it(`S7/S8/S11/S24 ${driver.name}: 0 double executions, 0 lost results, no key held past the restart`, async () => {
        const table = `crash_${driver.name.replace(/\W/g, '')}`;
        const payments = sql.identifier(`${table}_payments`);
        const opened = driver.open(server.url);
        try {
          await migratePostgres(opened.db, { table });
          await opened.db.execute(
            sql`create table ${payments} (id serial primary key, key text not null)`,
          );
          const guard = createGuard({ store: postgresStore(opened.db, { table }) });
          const pay = (key: string): Promise<Answer> =>
            guard
              .run({
                scope: 'acct',
                key,
                fingerprint: 'pay',
                operation: 'pay',
                work: async (tx) => {
                  const [row] = rowsOf<{ id: number }>(
                    await (tx as AnyPgDatabase).execute(
                      sql`insert into ${payments} (key) values (${key}) returning id`,
                    ),
                  );
                  // Time inside the transaction, so that the crash finds some in flight.
                  await sleep(10);
                  return String(row!.id);
                },
              })
              .then(
                (r) => ({ key, outcome: r.replayed ? 'replayed' : 'paid', paymentId: r.value }),
                (e) => ({ key, outcome: IdempotencyError.is(e) ? e.code : `error: ${e}` }),
              );

          // Load: each client pays one key after another until the crash. A client answered
          // 503 waits 100 ms before its next key, as its retries below do. Without that
          // pause the number of keys made during the crash (`pg_ctl stop` takes 0.3-1 s)
          // is however fast the driver answers 503: ~60 on node-postgres, which tries a
          // connection for each, but 400-2300 on postgres.js 4, which fails at once between
          // its connection attempts (pool.js `failingFast`). All of them are retried at once
          // after the restart through 8 connections, and the bound below would time the
          // queue (~35 ms a payment on a loaded machine), not how long a key is held.
          const before: Answer[] = [];
          let crashed = false;
          const clients = Array.from({ length: CLIENTS }, async (_, c) => {
            for (let n = 0; !crashed; n++) {
              const answer = await pay(`c${c}-${n}`);
              before.push(answer);
              if (answer.outcome !== 'paid') await sleep(100);
            }
          });
          await sleep(600);
          await server.crash();
          crashed = true;
          await Promise.all(clients);
          await server.start();
          const restartedAt = Date.now();

          const keys = [...new Set(before.map((a) => a.key))];
          const paidBefore = before.filter((a) => a.outcome === 'paid');
          expect(paidBefore.length).toBeGreaterThan(0);
          expect(before.some((a) => a.outcome === 'IDEMPOTENCY_STORE_UNAVAILABLE')).toBe(true);
          expect(
            before.filter((a) => !['paid', 'IDEMPOTENCY_STORE_UNAVAILABLE'].includes(a.outcome)),
          ).toEqual([]);

          // Every key is retried, with the same key, until its answer is final.
          const settled = await Promise.all(
            keys.map(async (key) => {
              for (;;) {
                const answer = await pay(key);
                if (answer.outcome === 'paid' || answer.outcome === 'replayed') {
                  return { answer, after: Date.now() - restartedAt };
                }
                if (Date.now() - restartedAt > SETTLE_MS + 5_000) return { answer, after: -1 };
                await sleep(answer.outcome === 'IDEMPOTENCY_KEY_IN_USE' ? 200 : 100);
              }
            }),
          );
          // Never stuck: every key answered soon after the restart (plus reconnect time).
          expect(settled.filter((s) => s.after < 0 || s.after > SETTLE_MS + 3_000)).toEqual([]);

          const rows = rowsOf<{ id: number; key: string }>(
            await opened.db.execute(sql`select id, key from ${payments}`),
          );
          const perKey = new Map<string, number>();
          for (const row of rows) perKey.set(row.key, (perKey.get(row.key) ?? 0) + 1);
          // 0 double executions, and every key paid in the end.
          expect([...perKey.entries()].filter(([, n]) => n !== 1)).toEqual([]);
          expect(keys.filter((key) => !perKey.has(key))).toEqual([]);
          // 0 lost results: a 200 before the crash has its row, and its retry replays it.
          const byKey = new Map(settled.map((s) => [s.answer.key, s.answer]));
          expect(
            paidBefore.filter((a) => {
              const retry = byKey.get(a.key);
              return retry?.outcome !== 'replayed' || retry.paymentId !== a.paymentId;
            }),
          ).toEqual([]);
          const ids = new Set(rows.map((row) => String(row.id)));
          expect(paidBefore.filter((a) => !ids.has(a.paymentId!))).toEqual([]);
        } finally {
          // Closing waits for every client the store checked out: none may leak in a crash.
          await opened.close();
        }
      }, 60_000);
    }
  },
);
