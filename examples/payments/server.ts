/**
 * `npm start`: the payments service. Configuration comes from the environment (config.ts):
 * PORT, DATABASE_URL or SQLITE_PATH, PAYMENT_LATENCY_MS, IDEMPOTENCY_RETENTION_MS.
 *
 * It prints one line, `payments service listening on http://localhost:<port> ...`, with the
 * real port (PORT=0 picks a free one): the demo and the end-to-end tests read it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { readConfig } from './config.js';
import { openDatabase } from './database.js';
import { schedulePurge } from './purge.js';
import { maskPassword } from './redact.js';

async function main(): Promise<void> {
  const config = readConfig();
  const db = await openDatabase(config);
  const app = createApp(db, config);
  const stopPurge = schedulePurge(app.guard);

  const server = createServer(app.listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, resolve);
  });
  const { port } = server.address() as AddressInfo;
  console.log(
    `payments service listening on http://localhost:${port} (GraphQL /graphql, tRPC /trpc, GET /health); store: ${db.description}`,
  );

  let closing = false;
  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    if (closing) process.exit(1); // a second Ctrl+C: stop waiting
    closing = true;
    console.log(`${signal}: finishing requests in flight, then closing the database`);
    stopPurge();
    server.closeIdleConnections();
    // Requests still running get a few seconds; their transactions then roll back with the
    // connection, which frees their keys.
    const force = setTimeout(() => server.closeAllConnections(), 5000);
    force.unref();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(force);
    await db.close();
    process.exit(0);
  }
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
}

main().catch((error: unknown) => {
  // Driver errors may quote the connection string: no path prints its password.
  const message = maskPassword(
    error instanceof Error ? error.message : String(error),
    process.env.DATABASE_URL,
  );
  console.error(`payments service failed to start: ${message}`);
  process.exit(1);
});
