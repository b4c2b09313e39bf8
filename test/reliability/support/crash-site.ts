/**
 * Where crash trials run: one database (an SQLite temp file or a Postgres table set), a
 * backend to inspect it, and a healthy server on it (tRPC and GraphQL) that takes the
 * retries while the doomed processes are killed. Shared by the quick set and the soak.
 */
import { TEST_DATABASE_URL, uniqueTableName } from '../../support/postgres.js';
import {
  type Backend,
  dropPostgresTables,
  migratePostgresTables,
  openBackend,
  type ServerTarget,
  type StoreKind,
  targetConfig,
  tempSqliteFile,
} from './backend.js';
import { type ServerProcess, serverTargetEnv, startServer } from './process.js';

export interface CrashSite {
  kind: StoreKind;
  /** Postgres only: the driver and default isolation of the healthy and the doomed processes. */
  target: ServerTarget | undefined;
  location: string;
  table: string;
  backend: Backend;
  healthy: ServerProcess;
}

export async function openCrashSite(
  kind: StoreKind,
  tablePrefix: string,
  target?: ServerTarget,
  location: string = kind === 'sqlite' ? tempSqliteFile() : TEST_DATABASE_URL,
): Promise<CrashSite> {
  const table = uniqueTableName(tablePrefix);
  if (kind === 'postgres') await migratePostgresTables(location, table);
  const backend = await openBackend({
    kind,
    location,
    table,
    ...(target ? targetConfig(target) : {}),
  });
  const healthy = await startServer({
    STORE: kind,
    LOCATION: location,
    TABLE: table,
    GRAPHQL: 1,
    ...serverTargetEnv(target),
  });
  return { kind, target, location, table, backend, healthy };
}

/** What a crash trial's doomed process needs to open the site's database. */
export function serverEnvOf(site: CrashSite) {
  return {
    STORE: site.kind,
    LOCATION: site.location,
    TABLE: site.table,
    ...serverTargetEnv(site.target),
  };
}

export async function closeCrashSite(site: CrashSite): Promise<void> {
  await site.healthy.stop();
  await site.backend.close();
  if (site.kind === 'postgres') await dropPostgresTables(site.location, site.table);
}
