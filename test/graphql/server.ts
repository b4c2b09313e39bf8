/** Serves a Yoga instance over real HTTP on loopback, port chosen by the OS. */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listen(
  handler: RequestListener,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
