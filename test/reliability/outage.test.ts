/**
 * Outage (SPEC S8, S11, S15): the app reaches Postgres through a TCP proxy that
 * cuts every connection in the middle of load, then refuses connections for a while, then
 * lets them through again. Clients behave like real ones: each retries its payment with the
 * same key until it gets a 200. On each driver, and each again on sessions defaulting to
 * SERIALIZABLE (S24). PGlite has no link to cut.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability, TEST_DATABASE_URL, uniqueTableName } from '../support/postgres.js';
import { type FaultProxy, startFaultProxy } from '../support/tcp-proxy.js';
import {
  type Backend,
  dropPostgresTables,
  migratePostgresTables,
  openBackend,
  SERVER_TARGETS,
  targetConfig,
} from './support/backend.js';
import { type Answer, payTrpc } from './support/client.js';
import { type Served, serveApp } from './support/serve.js';

const pg = await postgresAvailability();
const CLIENTS = 30;
const PAYMENTS_PER_CLIENT = 8;

// S24: on each driver (postgres.js rejects a transaction the moment its connection closes).
for (const target of SERVER_TARGETS)
  describe.skipIf(!pg.realPostgres)(
    `outage through a fault proxy, ${target.name} ${pg.skipReason ?? ''}`,
    () => {
      const table = uniqueTableName('rel_outage');
      let proxy: FaultProxy;
      let backend: Backend;
      let direct: Backend;
      let app: Served;
      beforeAll(async () => {
        await migratePostgresTables(TEST_DATABASE_URL, table);
        const server = new URL(TEST_DATABASE_URL);
        proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) });
        const viaProxy = new URL(TEST_DATABASE_URL);
        viaProxy.port = String(proxy.port);
        backend = await openBackend({
          kind: 'postgres',
          ...targetConfig(target),
          location: viaProxy.href,
          table,
          poolSize: 8,
        });
        // The judge reads the tables around the proxy.
        direct = await openBackend({ kind: 'postgres', location: TEST_DATABASE_URL, table });
        app = await serveApp(backend, {}, { delayMs: 5 });
      });
      afterAll(async () => {
        await app?.close();
        await backend?.close();
        await direct?.close();
        await proxy?.close();
        await dropPostgresTables(TEST_DATABASE_URL, table);
      });

      it('S15/S8: cuts and a down phase mid-load answer 503 (never 500, never unguarded); nothing runs twice; every payment lands once after recovery', async () => {
        let down = false;
        const log: { key: string; answer: Answer; sentDown: boolean; answeredDown: boolean }[] = [];
        let stop = false;
        const clients = Array.from({ length: CLIENTS }, async (_, c) => {
          for (let p = 0; p < PAYMENTS_PER_CLIENT && !stop; p++) {
            const request = { key: `outage-${c}-${p}`, amount: 1 + c, account: `acct_${c % 3}` };
            // A careful client: same key on every retry until the answer is final.
            while (!stop) {
              const sentDown = down;
              const answer = await payTrpc(app.url, request);
              log.push({ key: request.key, answer, sentDown, answeredDown: down });
              if (answer.status === 200) break;
              await sleep(answer.status === 409 ? 100 : 50);
            }
          }
        });
        // The faults, while the clients run: three cuts, then 3 s down, then back. Calls sent
        // while down fail fast on both drivers: the proxy closes each new connection at once,
        // and the driver rejects the call on the reset (postgres.js: as long as it retries
        // promptly, see `backoff` in support/backend-postgres.ts).
        const faults = (async () => {
          for (let cut = 0; cut < 3; cut++) {
            await sleep(150);
            proxy.cutAll();
          }
          down = true;
          proxy.setDown(true);
          await sleep(3000);
          proxy.setDown(false);
          down = false;
        })();
        const watchdog = setTimeout(() => {
          stop = true;
        }, 40_000);
        await Promise.all([...clients, faults]);
        clearTimeout(watchdog);

        const statuses = new Set(log.map((entry) => entry.answer.status));
        const during = log.filter((entry) => entry.sentDown && entry.answeredDown);
        const rows = await direct.payments();
        const perKey = new Map<string, number>();
        for (const row of rows) perKey.set(row.key, (perKey.get(row.key) ?? 0) + 1);
        const finals = log.filter((entry) => entry.answer.status === 200);

        expect(stop, 'clients gave up: the service did not recover').toBe(false);
        expect([...statuses].filter((status) => ![200, 409, 503].includes(status))).toEqual([]);
        expect(log.filter((entry) => entry.sentDown).length).toBeGreaterThan(0);
        // Some calls were both sent and answered while down (on each driver), so the S15 check
        // below is not vacuous.
        expect(during.length).toBeGreaterThan(0);
        // S15: while the database is away, every guarded mutation fails closed.
        expect(during.filter((entry) => entry.answer.status !== 503)).toEqual([]);
        expect(
          log.filter(
            (e) => e.answer.status === 503 && e.answer.code !== 'IDEMPOTENCY_STORE_UNAVAILABLE',
          ),
        ).toEqual([]);
        // Nothing ran twice, nothing was lost: one row per key, and it is the answered one.
        expect(rows.length).toBe(CLIENTS * PAYMENTS_PER_CLIENT);
        expect([...perKey.values()].every((count) => count === 1)).toBe(true);
        const rowByKey = new Map(rows.map((row) => [row.key, row.id]));
        expect(finals.filter((e) => rowByKey.get(e.key) !== e.answer.payment?.paymentId)).toEqual(
          [],
        );
        // After recovery, each key replays the answer its client got.
        const again = await Promise.all(
          finals.map(async (e) => ({
            e,
            replay: await payTrpc(app.url, {
              key: e.key,
              amount: e.answer.payment!.amount,
              account: e.answer.payment!.scope,
            }),
          })),
        );
        expect(
          again.filter(({ e, replay }) => !replay.replayed || replay.text !== e.answer.text),
        ).toEqual([]);
      }, 60_000);
    },
  );

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
