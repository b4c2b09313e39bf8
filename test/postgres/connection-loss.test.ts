/**
 * S15 with node-postgres: a connection that drops while a guarded transaction awaits its
 * work must fail that mutation closed (503), not crash the process. (A pool's checked-out
 * client has no 'error' listener of its own; see src/postgres/connection-errors.ts.) An
 * unhandled 'error' here would make vitest fail the run even if the assertions passed.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { createNodePgDb, postgresAvailability, uniqueTableName } from '../support/postgres.js';
import { type FaultProxy, startFaultProxy } from '../support/tcp-proxy.js';

const pg = await postgresAvailability();

describe.skipIf(!pg.realPostgres)(
  `node-postgres connection loss mid-transaction${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('connloss');
    let proxy: FaultProxy;
    let direct: ReturnType<typeof createNodePgDb>;
    let proxied: ReturnType<typeof createNodePgDb>;

    beforeAll(async () => {
      proxy = await startFaultProxy({ host: '127.0.0.1', port: 5432 });
      direct = createNodePgDb();
      proxied = createNodePgDb({ url: `postgres://postgres@127.0.0.1:${proxy.port}/test` });
      await migratePostgres(direct.db, { table });
      await direct.db.execute(sql.raw(`CREATE TABLE "${table}_business" (id text PRIMARY KEY)`));
    });
    afterAll(async () => {
      await proxied.close();
      await direct.db.execute(
        sql.raw(`DROP TABLE IF EXISTS "${table}", "${table}_migrations", "${table}_business"`),
      );
      await direct.close();
      await proxy.close();
    });

    it('S8/S15: the mutation answers 503, its row is not committed, and a retry runs once', async () => {
      const guard = createGuard({ store: postgresStore(proxied.db, { table }) });
      let runs = 0;
      const call = (work: (tx: typeof proxied.db) => Promise<string>) => ({
        scope: 's',
        key: 'k1',
        fingerprint: 'f',
        operation: 'pay',
        work: work as never,
      });
      const first = guard
        .run(
          call(async (tx) => {
            runs++;
            await tx.execute(sql.raw(`INSERT INTO "${table}_business" (id) VALUES ('first')`));
            // The card processor takes its time; the database connection drops meanwhile.
            await new Promise((resolve) => setTimeout(resolve, 300));
            return 'first';
          }),
        )
        .catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      proxy.cutAll();
      const outcome = await first;
      expect(IdempotencyError.is(outcome) && outcome.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');

      const count = async () =>
        (await direct.db.execute(sql.raw(`SELECT count(*)::int AS n FROM "${table}_business"`)))
          .rows[0]?.n;
      expect(await count()).toBe(0);

      const retry = await guard.run(
        call(async (tx) => {
          runs++;
          await tx.execute(sql.raw(`INSERT INTO "${table}_business" (id) VALUES ('retry')`));
          return 'retry';
        }),
      );
      expect(retry).toEqual({ value: 'retry', replayed: false });
      expect(runs).toBe(2);
      expect(await count()).toBe(1);
    });
  },
);
