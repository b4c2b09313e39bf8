/**
 * Puts the service together for one database: the guard, the payments service, both
 * surfaces and the HTTP routes. Generic in the dialect, so it is written once for both and
 * takes whichever `openDatabase` opened.
 */
import type { RequestListener } from 'node:http';
import { createGuard, type Guard } from '../../src/index.js';
import type { DemoConfig } from './config.js';
import type { Dialect, OpenDatabase, Transactions } from './database.js';
import { createGraphQLHandler } from './graphql.js';
import { createRequestListener } from './http.js';
import { paymentsService } from './payments-service.js';
import { createTrpcRouter } from './trpc.js';

export interface App<Tx> {
  listener: RequestListener;
  /** For the purge schedule. */
  guard: Guard<Tx>;
}

export function createApp<D extends Dialect>(
  db: OpenDatabase<D>,
  config: DemoConfig,
): App<Transactions[D]> {
  const guard = createGuard<Transactions[D]>({
    store: db.store,
    // Unset, the guard's default (24 h retention).
    ...(config.retentionMs === undefined ? {} : { retention: config.retentionMs }),
  });
  const service = paymentsService(db.payments, { latencyMs: config.paymentLatencyMs });
  const yoga = createGraphQLHandler(guard, service);
  const router = createTrpcRouter(guard, service);
  return { guard, listener: createRequestListener(yoga, router) };
}
