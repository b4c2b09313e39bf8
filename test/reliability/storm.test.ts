/**
 * Storms across processes (SPEC S7, S9, S10, S24): two server processes on one
 * Postgres, 300 requests (20% duplicates) from 50 concurrent clients, through each driver,
 * and each again on sessions defaulting to SERIALIZABLE. PGlite is not here: its database
 * lives in one process, and a storm across processes is the point. `npm run soak` fires
 * the full-size storms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability } from '../support/postgres.js';
import { SERVER_TARGETS } from './support/backend.js';
import { runStorm } from './support/storm.js';
import { openStormSite, type StormSite } from './support/storm-site.js';

const pg = await postgresAvailability();

for (const target of SERVER_TARGETS) {
  describe.skipIf(!pg.realPostgres)(
    `storm across processes, ${target.name} ${pg.skipReason ?? ''}`,
    () => {
      let site: StormSite;
      beforeAll(async () => {
        site = await openStormSite(target, { tablePrefix: 'rel_storm', processes: 2 });
      });
      afterAll(async () => {
        await site?.close();
      });

      it('S7/S9/S10: 2 processes, 300 requests, 20% duplicates, 50 clients: one payment per key; every duplicate replayed identically or got 409', async () => {
        const figures = await runStorm({
          urls: site.servers.map((server) => server.url),
          backend: site.backend,
          requests: 300,
          clients: 50,
          seed: 6,
          keyPrefix: 'storm-quick',
        });
        expect(figures.violations).toEqual([]);
        expect(figures).toMatchObject({
          requests: 300,
          distinctKeys: 240,
          duplicates: 60,
          doubleExecutions: 0,
          lostResults: 0,
        });
        expect(figures.replays + figures.conflicts).toBe(60);
        expect((await site.backend.payments()).length).toBe(240);
      }, 60_000);
    },
  );
}
