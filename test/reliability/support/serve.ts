/** Serves the payments app in this process on loopback (outage, hostile and scope tests). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuard, type GuardOptions } from '../../../src/index.js';
import { type PaymentsAppOptions, paymentsApp } from './app.js';
import type { Backend } from './backend.js';

export interface Served {
  url: string;
  close(): Promise<void>;
}

export async function serveApp(
  backend: Backend,
  guardOptions: Omit<GuardOptions<unknown>, 'store'> = {},
  appOptions: PaymentsAppOptions = {},
): Promise<Served> {
  const guard = createGuard({ store: backend.store, ...guardOptions });
  const server = createServer(await paymentsApp(guard, backend, appOptions));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
