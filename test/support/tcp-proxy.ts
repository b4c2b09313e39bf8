/**
 * A small TCP proxy for outage tests. It forwards loopback traffic to
 * a target (the real Postgres) and can cut every connection, refuse new ones, and come back,
 * so that a test can take the database away in the middle of load without touching the
 * server itself. Traffic stays on 127.0.0.1.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  /** The port clients connect to. */
  readonly port: number;
  /** Open pairs right now. */
  readonly connections: number;
  /** Destroys every open connection (clients see a reset mid-query). */
  cutAll(): void;
  /** While down, new connections are accepted and closed at once, and open ones are cut. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  const cutAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    port: address.port,
    get connections() {
      return open.size / 2;
    },
    cutAll,
    setDown(value) {
      down = value;
      if (down) cutAll();
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}
