/**
 * Storm soak: three server processes on one Postgres, then two storms of 1,500
 * requests each (20% duplicate keys) from 60 concurrent clients, with fresh random plans;
 * through each driver, and each again on sessions defaulting to SERIALIZABLE (S24). PGlite
 * is not here: its database lives in one process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability } from '../../support/postgres.js';
import { SERVER_TARGETS } from '../support/backend.js';
import { runStorm } from '../support/storm.js';
import { openStormSite, type StormSite } from '../support/storm-site.js';
import { record, soakSeed } from './figures.js';

const pg = await postgresAvailability();
const PROCESSES = 3;

for (const target of SERVER_TARGETS) {
  describe.skipIf(!pg.realPostgres)(
    `soak: storms across processes, ${target.name} ${pg.skipReason ?? ''}`,
    () => {
      let site: StormSite;
      beforeAll(async () => {
        site = await openStormSite(target, { tablePrefix: 'soak_storm', processes: PROCESSES });
      });
      afterAll(async () => {
        await site?.close();
      });

      for (const round of [1, 2]) {
        it(`S7/S9/S10/S24 storm ${round}: ${PROCESSES} processes, 1,500 requests, 20% duplicates, 60 clients`, async () => {
          const figures = await runStorm({
            urls: site.servers.map((server) => server.url),
            backend: site.backend,
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
          const rows = (await site.backend.payments()).filter((r) =>
            r.key.startsWith(`storm-${round}-`),
          );
          expect(rows.length).toBe(figures.distinctKeys);
        }, 120_000);
      }
    },
  );
}
