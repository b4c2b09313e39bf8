/**
 * What a storm across processes stands on (SPEC S24), shared by the quick storm and the
 * soak's storms: a Postgres records table of its own, a backend to read payments back through
 * the target's driver and isolation default, and server processes on that table, each payment
 * held in flight long enough (DELAY_MS) for duplicates to collide (409).
 */
import { TEST_DATABASE_URL, uniqueTableName } from '../../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  migratePostgresTables,
  openBackend,
  type ServerTarget,
  targetConfig,
} from './backend.js';
import { type ServerProcess, serverTargetEnv, startServer } from './process.js';

export interface StormSite {
  backend: Backend;
  servers: ServerProcess[];
  close(): Promise<void>;
}

export async function openStormSite(
  target: ServerTarget,
  options: { tablePrefix: string; processes: number },
): Promise<StormSite> {
  const table = uniqueTableName(options.tablePrefix);
  await migratePostgresTables(TEST_DATABASE_URL, table);
  const backend = await openBackend({
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
  const servers = await Promise.all(
    Array.from({ length: options.processes }, () => startServer({ ...env, DELAY_MS: 10 })),
  );
  return {
    backend,
    servers,
    close: async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await backend.close();
      await dropPostgresTables(TEST_DATABASE_URL, table);
    },
  };
}
