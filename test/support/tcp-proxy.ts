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
  /** Closes every open connection (clients see the link end mid-query: a FIN). */
  cutAll(): void;
  /**
   * Resets every open connection (clients see ECONNRESET: an RST, as when a server dies
   * with unread data in its socket or a middlebox drops the link).
   */
  resetAll(): void;
  /** While down, new connections are accepted and closed at once, and open ones are cut. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  /** The client side of each pair, to reset. */
  const clients = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    clients.add(client);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      clients.delete(client);
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
    resetAll() {
      for (const client of [...clients]) client.resetAndDestroy();
    },
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
