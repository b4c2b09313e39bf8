/**
 * Storms across processes (SPEC S7, S9, S10, S24): two server processes on one
 * Postgres, 300 requests (20% duplicates) from 50 concurrent clients, through each driver,
 * and each again on sessions defaulting to SERIALIZABLE. PGlite is not here: its database
 * lives in one process, and a storm across processes is the point. `npm run soak` fires
 * the full-size storms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability, TEST_DATABASE_URL, uniqueTableName } from '../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  migratePostgresTables,
  openBackend,
  SERVER_TARGETS,
  targetConfig,
} from './support/backend.js';
import { type ServerProcess, serverTargetEnv, startServer } from './support/process.js';
import { runStorm } from './support/storm.js';

const pg = await postgresAvailability();

for (const target of SERVER_TARGETS) {
  describe.skipIf(!pg.realPostgres)(
    `storm across processes, ${target.name} ${pg.skipReason ?? ''}`,
    () => {
      const table = uniqueTableName('rel_storm');
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
        // DELAY_MS keeps each payment in flight long enough for duplicates to collide (409).
        servers = await Promise.all([1, 2].map(() => startServer({ ...env, DELAY_MS: 10 })));
      });
      afterAll(async () => {
        await Promise.all(servers.map((server) => server.stop()));
        await backend?.close();
        await dropPostgresTables(TEST_DATABASE_URL, table);
      });

      it('S7/S9/S10: 2 processes, 300 requests, 20% duplicates, 50 clients: one payment per key; every duplicate replayed identically or got 409', async () => {
        const figures = await runStorm({
          urls: servers.map((server) => server.url),
          backend,
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
        expect((await backend.payments()).length).toBe(240);
      }, 60_000);
    },
  );
}
