/**
 * The payments service as its own process, for crash and storm tests:
 *
 *   STORE=sqlite|postgres LOCATION=<file or url> TABLE=<name> node --import tsx server-main.ts
 *
 * Optional: PG_DRIVER (node-postgres | postgres.js), PG_DEFAULT_ISOLATION (serializable),
 * DELAY_MS (time inside each transaction), GRAPHQL=1, FAULT_POINT (after-claim |
 * in-transaction | after-commit: print `FAULT <point> ...` and hang there until killed).
 * Prints `READY <port>` once it listens on 127.0.0.1 (port chosen by the OS).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuard } from '../../../src/index.js';
import { paymentsApp } from './app.js';
import {
  type DefaultIsolation,
  openBackend,
  type PostgresDriver,
  type StoreKind,
} from './backend.js';
import { FAULT_POINTS, type FaultPoint, hangAt, instrument } from './instrument.js';

const env = process.env;
const kind = env.STORE as StoreKind;
const fault = env.FAULT_POINT as FaultPoint | undefined;
if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`STORE=${env.STORE}?`);
if (fault !== undefined && !FAULT_POINTS.includes(fault)) throw new Error(`FAULT_POINT=${fault}?`);

const backend = await openBackend({
  kind,
  location: required('LOCATION'),
  table: required('TABLE'),
  poolSize: Number(env.POOL_SIZE ?? 10),
  ...(env.PG_DRIVER ? { driver: env.PG_DRIVER as PostgresDriver } : {}),
  ...(env.PG_DEFAULT_ISOLATION
    ? { defaultIsolation: env.PG_DEFAULT_ISOLATION as DefaultIsolation }
    : {}),
});
const store = fault
  ? instrument(
      backend.store,
      hangAt(fault, (line) => process.stdout.write(`${line}\n`)),
    )
  : backend.store;
const guard = createGuard({ store });
const app = await paymentsApp(guard, backend, {
  delayMs: Number(env.DELAY_MS ?? 0),
  graphql: env.GRAPHQL === '1',
});
const server = createServer(app);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
// The parent ends healthy servers with SIGTERM; crashed ones get SIGKILL and no say.
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void backend.close().finally(() => process.exit(0)));
});

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
