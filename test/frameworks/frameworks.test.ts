/**
 * The framework examples (examples/frameworks): Express and Fastify over real HTTP on
 * loopback, Next.js route handlers called as Next calls them. Through each adapter, on both
 * surfaces, a retry gets Idempotent-Replayed: true (S9), and a duplicate of a payment in
 * flight gets 409 with Retry-After (S10). Replays run on the SQLite store; the in-flight
 * duplicates on the real Postgres, where a duplicate never queues behind its original.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressApp } from '../../examples/frameworks/express.js';
import { createFastifyApp } from '../../examples/frameworks/fastify.js';
import { nextRouteHandlers } from '../../examples/frameworks/next.js';
import { createPayments, type PaymentsOptions } from '../../examples/frameworks/payments.js';
import { createGuard, type Guard } from '../../src/index.js';
import { migratePostgres, pgIdempotencyTable, postgresStore } from '../../src/postgres/index.js';
import { openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';

// Under CI=true an unreachable Postgres fails the run here instead of skipping.
const pg = await postgresAvailability();

/** Sends one request to wherever the framework listens. */
type Send = (path: string, init: RequestInit) => Promise<Response>;

interface Framework {
  name: string;
  /** Starts the framework's app for these payments; resolves to how to reach it and stop it. */
  start(
    guard: Guard<never>,
    options: PaymentsOptions,
  ): Promise<{ send: Send; stop(): Promise<void> }>;
}

const frameworks: Framework[] = [
  {
    name: 'Express',
    async start(guard, options) {
      const app = createExpressApp(createPayments(guard, options));
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        send: (path, init) => fetch(`${origin}${path}`, init),
        stop: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
  },
  {
    name: 'Fastify',
    async start(guard, options) {
      const app = await createFastifyApp(createPayments(guard, options));
      const origin = await app.listen({ port: 0, host: '127.0.0.1' });
      return { send: (path, init) => fetch(`${origin}${path}`, init), stop: () => app.close() };
    },
  },
  {
    name: 'Next.js route handlers',
    async start(guard, options) {
      const handlers = nextRouteHandlers(
        createPayments(guard, { ...options, graphqlEndpoint: '/api/graphql' }),
      );
      return {
        // What Next does for app/api/trpc/[trpc]/route.ts and app/api/graphql/route.ts.
        send: (path, init) => {
          const request = new Request(`http://localhost/api${path}`, init);
          const route = path.startsWith('/trpc/') ? handlers.trpc : handlers.graphql;
          return init.method === 'POST' ? route.POST(request) : route.GET(request);
        },
        stop: async () => {},
      };
    },
  },
];

const surfaces = {
  graphql: (key: string, amount: number): [string, RequestInit] => [
    '/graphql',
    post({
      query: 'mutation Pay($input: PayInput!) { pay(input: $input) { id amount } }',
      variables: { input: { amount, idempotencyKey: key } },
    }),
  ],
  trpc: (key: string, amount: number): [string, RequestInit] => [
    '/trpc/pay',
    post({ amount, idempotencyKey: key }),
  ],
};

function post(body: object, account = 'acct_frameworks'): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-account': account },
    body: JSON.stringify(body),
  };
}

for (const framework of frameworks) {
  describe(`${framework.name}: replays on the SQLite store`, () => {
    let app: Awaited<ReturnType<Framework['start']>> | undefined;
    beforeAll(async () => {
      const guard = createGuard({ store: sqliteStore(openSqlite(':memory:')) });
      app = await framework.start(guard as Guard<never>, {});
    });
    afterAll(() => app?.stop());

    for (const [surface, request] of Object.entries(surfaces)) {
      it(`S9: a ${surface} retry through ${framework.name} carries Idempotent-Replayed: true`, async () => {
        const key = randomUUID();
        const first = await app!.send(...request(key, 1250));
        const again = await app!.send(...request(key, 1250));

        expect(first.status, await first.clone().text()).toBe(200);
        expect(first.headers.get('idempotent-replayed')).toBeNull();
        expect(again.status).toBe(200);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await again.text()).toBe(await first.text());
      });
    }
  });

  describe.skipIf(!pg.realPostgres)(
    `${framework.name}: duplicates in flight on Postgres ${pg.skipReason ?? ''}`,
    () => {
      let app: Awaited<ReturnType<Framework['start']>> | undefined;
      let close: (() => Promise<void>) | undefined;
      beforeAll(async () => {
        const { db, close: end } = createNodePgDb();
        const name = uniqueTableName('frameworks');
        close = async () => {
          await dropRecordsTable(db, name);
          await end();
        };
        await migratePostgres(db, { table: name });
        const guard = createGuard({
          store: postgresStore(db, { table: pgIdempotencyTable(name) }),
        });
        app = await framework.start(guard as Guard<never>, { latencyMs: 600 });
      });
      afterAll(async () => {
        await app?.stop();
        await close?.();
      });

      for (const [surface, request] of Object.entries(surfaces)) {
        it(`S10: ${surface} duplicates through ${framework.name} get 409 with Retry-After, then the replay`, async () => {
          const key = randomUUID();
          const answers = await Promise.all(
            Array.from({ length: 5 }, () => app!.send(...request(key, 990))),
          );
          const statuses = answers.map((a) => a.status).sort();
          expect(statuses).toEqual([200, 409, 409, 409, 409]);
          for (const busy of answers.filter((a) => a.status === 409)) {
            expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          }

          const retry = await app!.send(...request(key, 990));
          expect(retry.status).toBe(200);
          expect(retry.headers.get('idempotent-replayed')).toBe('true');
          const fresh = answers.find((a) => a.status === 200)!;
          expect(await retry.text()).toBe(await fresh.text());
        });
      }
    },
  );
}
