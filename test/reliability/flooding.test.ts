/**
 * Key flooding (SPEC S14): a flood of unique keys, each wave fired at once, with a
 * bounded purge after each wave. The table never holds more than what the retention window
 * lets live, and empties once the flood stops. SQLite on a driven clock; Postgres on the
 * database's clock: the real server through each driver (also on sessions defaulting to
 * SERIALIZABLE, S24), and PGlite.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/index.js';
import { postgresAvailability, TEST_DATABASE_URL, uniqueTableName } from '../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  IN_PROCESS_STORES,
  migratePostgresTables,
  needsServer,
  openBackend,
  targetConfig,
  tempSqliteFile,
} from './support/backend.js';

const pg = await postgresAvailability();
/** Keys per wave: fewer on Postgres, where each claim is a round trip. */
const WAVES = { sqlite: 100, postgres: 40 } as const;

describe('key flooding: purge keeps the table bounded', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  for (const store of IN_PROCESS_STORES) {
    const { name, postgres } = store;
    const onServer = needsServer(store);
    const skip = onServer && !pg.realPostgres;
    const kind = postgres ? 'postgres' : 'sqlite';
    const WAVE = WAVES[kind];
    it.skipIf(skip)(
      `S14 ${name}: 20 waves of ${WAVE} unique keys, purge after each: rows stay within the retention window, then drain to 0`,
      async () => {
        const clock = { time: 1_700_000_000_000 };
        const table = uniqueTableName('rel_flood');
        if (onServer) await migratePostgresTables(TEST_DATABASE_URL, table);
        const backend: Backend = await openBackend({
          kind,
          table,
          location: postgres ? TEST_DATABASE_URL : tempSqliteFile(),
          now: () => clock.time,
          ...(postgres ? targetConfig(postgres) : {}),
        });
        cleanup.push(async () => {
          await backend.close();
          if (onServer) await dropPostgresTables(TEST_DATABASE_URL, table);
        });
        // Records live `retention` after completion; waves come at least `tick` apart (more
        // when the machine is busy), so at most retention / tick waves can be alive at once,
        // plus the one just written.
        const tick = kind === 'sqlite' ? 100 : 60;
        const retention = 5 * tick;
        const bound = (retention / tick + 1) * WAVE;
        const guard = createGuard({ store: backend.store, retention });
        const elapse = async (ms: number) => {
          if (kind === 'sqlite') clock.time += ms;
          else await new Promise((resolve) => setTimeout(resolve, ms));
        };

        let peak = 0;
        let purged = 0;
        for (let wave = 0; wave < 20; wave++) {
          await Promise.all(
            Array.from({ length: WAVE }, (_, i) =>
              guard.run({
                scope: 'flood',
                key: `w${wave}-${i}`,
                fingerprint: 'fp',
                operation: 'pay',
                work: async () => ({ ok: true }),
              }),
            ),
          );
          purged += await guard.purge({ batchSize: 37 });
          peak = Math.max(peak, (await backend.records()).length);
          await elapse(tick);
        }
        await elapse(retention + tick);
        purged += await guard.purge({ batchSize: 37 });

        expect(peak).toBeLessThanOrEqual(bound);
        expect(purged).toBe(20 * WAVE);
        expect(await backend.records()).toEqual([]);
      },
    );
  }
});
