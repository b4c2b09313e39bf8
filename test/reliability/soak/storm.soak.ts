/**
 * Storm soak: three server processes on one Postgres, then two storms of 1,500
 * requests each (20% duplicate keys) from 60 concurrent clients, with fresh random plans;
 * through each driver, and each again on sessions defaulting to SERIALIZABLE (S24). PGlite
 * is not here: its database lives in one process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  postgresAvailability,
  TEST_DATABASE_URL,
  uniqueTableName,
} from '../../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  migratePostgresTables,
  openBackend,
  SERVER_TARGETS,
  targetConfig,
} from '../support/backend.js';
import { type ServerProcess, serverTargetEnv, startServer } from '../support/process.js';
import { runStorm } from '../support/storm.js';
import { record, soakSeed } from './figures.js';

const pg = await postgresAvailability();
const PROCESSES = 3;

for (const target of SERVER_TARGETS) {
  describe.skipIf(!pg.realPostgres)(
    `soak: storms across processes, ${target.name} ${pg.skipReason ?? ''}`,
    () => {
      const table = uniqueTableName('soak_storm');
      let backend: Backend;
      let servers: ServerProcess[] = [];
      beforeAll(async () => {
        await migratePostgresTables(TEST_DATABASE_URL, table);
        backend = await openBackend({
          kind: 'postgres',
          location: TEST_DATABASE_URL,
          table,
          ...targetConfig(target),
        });
        const env = {
          STORE: 'postgres',
          LOCATION: TEST_DATABASE_URL,
          TABLE: table,
          ...serverTargetEnv(target),
        } as const;
        servers = await Promise.all(
          Array.from({ length: PROCESSES }, () => startServer({ ...env, DELAY_MS: 10 })),
        );
      });
      afterAll(async () => {
        await Promise.all(servers.map((server) => server.stop()));
        await backend?.close();
        await dropPostgresTables(TEST_DATABASE_URL, table);
      });

      for (const round of [1, 2]) {
        it(`S7/S9/S10/S24 storm ${round}: ${PROCESSES} processes, 1,500 requests, 20% duplicates, 60 clients`, async () => {
          const figures = await runStorm({
            urls: servers.map((server) => server.url),
            backend,
            requests: 1500,
            clients: 60,
            seed: soakSeed(`storm ${round} ${target.name}`),
            keyPrefix: `storm-${round}`,
          });
          record({
            scenario: `storm ${round} (${PROCESSES} processes, 60 clients, Postgres, ${target.name})`,
            figures: {
              requests: figures.requests,
              distinctKeys: figures.distinctKeys,
              duplicates: figures.duplicates,
              replays: figures.replays,
              conflicts409: figures.conflicts,
              doubleExecutions: figures.doubleExecutions,
              lostResults: figures.lostResults,
              violations: figures.violations.length,
              durationMs: figures.durationMs,
            },
          });
          expect(figures.violations).toEqual([]);
          expect(figures.doubleExecutions).toBe(0);
          expect(figures.lostResults).toBe(0);
          expect(figures.replays + figures.conflicts).toBe(figures.duplicates);
          const rows = (await backend.payments()).filter((r) =>
            r.key.startsWith(`storm-${round}-`),
          );
          expect(rows.length).toBe(figures.distinctKeys);
        }, 120_000);
      }
    },
  );
}
