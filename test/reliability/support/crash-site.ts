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
  type StoreKind,
  tempSqliteFile,
} from './backend.js';
import { type ServerProcess, startServer } from './process.js';

export interface CrashSite {
  kind: StoreKind;
  location: string;
  table: string;
  backend: Backend;
  healthy: ServerProcess;
}

export async function openCrashSite(kind: StoreKind, tablePrefix: string): Promise<CrashSite> {
  const location = kind === 'sqlite' ? tempSqliteFile() : TEST_DATABASE_URL;
  const table = uniqueTableName(tablePrefix);
  if (kind === 'postgres') await migratePostgresTables(location, table);
  const backend = await openBackend({ kind, location, table });
  const healthy = await startServer({ STORE: kind, LOCATION: location, TABLE: table, GRAPHQL: 1 });
  return { kind, location, table, backend, healthy };
}

export async function closeCrashSite(site: CrashSite): Promise<void> {
  await site.healthy.stop();
  await site.backend.close();
  if (site.kind === 'postgres') await dropPostgresTables(site.location, site.table);
}
