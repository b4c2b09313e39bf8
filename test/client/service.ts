/**
 * The payments demo in this process, behind the HTTP fault proxy: on a temporary SQLite
 * file, or on the real Postgres when there is one. Clients talk to `proxy.url`; the tests
 * check the outcome on `direct`, past the proxy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../examples/payments/app.js';
import type { DemoConfig } from '../../examples/payments/config.js';
import { openDatabase } from '../../examples/payments/database.js';
import { type HttpFaultProxy, startHttpFaultProxy } from '../support/http-fault-proxy.js';
import { deleteDemoRowsOf, TEST_DATABASE_URL } from '../support/postgres.js';

/** The card processor's latency: long enough that a quick retry meets the payment in flight. */
export const LATENCY_MS = 250;

export interface Service {
  direct: string;
  proxy: HttpFaultProxy;
  /** Accounts the tests used, for clean-up on a shared Postgres. */
  accounts: string[];
  stop(): Promise<void>;
}

export async function startService(dialect: 'sqlite' | 'postgres'): Promise<Service> {
  const dir = dialect === 'sqlite' ? mkdtempSync(join(tmpdir(), 'mutation-guard-client-')) : '';
  const config: DemoConfig = {
    port: 0,
    databaseUrl: dialect === 'postgres' ? TEST_DATABASE_URL : undefined,
    sqlitePath: join(dir, 'payments.sqlite'),
    paymentLatencyMs: LATENCY_MS,
    retentionMs: undefined,
  };
  const db = await openDatabase(config);
  const app = createApp(db, config);
  const server = createServer(app.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const direct = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const proxy = await startHttpFaultProxy(direct);
  const accounts: string[] = [];
  return {
    direct,
    proxy,
    accounts,
    async stop() {
      await proxy.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
      if (dialect === 'postgres') await deleteDemoRowsOf(accounts);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}
