/**
 * SPEC S9 at the edges: a replay is the first answer byte for byte, also when a property is
 * named `__proto__`; and operation names a client chooses are bounded in what is stored.
 */
import { initTRPC } from '@trpc/server';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGuard, type GuardEvent, MAX_OPERATION_NAME } from '../../src/index.js';
import { openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import { idempotency } from '../../src/trpc/index.js';
import { sqlitePayments } from '../graphql/sqlite.js';
import { gql, paymentsServer } from '../graphql/support.js';
import { type Served, serve } from '../trpc/server.js';

const servers: Served[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

describe('S9: a property named __proto__ is replayed byte for byte', () => {
  it('S9: GraphQL: an alias `__proto__:` on a guarded mutation replays the same body', async () => {
    const setup = sqlitePayments();
    const { yoga, harness } = paymentsServer(setup);
    const request = {
      query: 'mutation { __proto__: pay(amount: 5) { id amount } other: pay(amount: 6) { id } }',
      key: 'proto-alias',
    };
    const first = await gql(yoga, request);
    expect(first.status).toBe(200);
    expect(first.text).toContain('"__proto__":{');
    const replay = await gql(yoga, request);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(harness.calls.pay).toBe(2);
  });

  // superjson refuses `__proto__` outright ("prototype pollution risk"), so this is the plain
  // JSON setup: no transformer, the default serializer.
  it('S9: tRPC: an output with an own __proto__ property replays the same body', async () => {
    const guard = createGuard({ store: sqliteStore(openSqlite(':memory:')) });
    const t = initTRPC.create();
    let runs = 0;
    const router = t.router({
      echo: t.procedure
        .input(z.object({ n: z.number() }))
        .concat(idempotency({ guard, scope: () => 'acct_1' }))
        .mutation(({ input }) => {
          runs++;
          return JSON.parse(
            `{"__proto__":{"n":${input.n},"admin":true},"list":[{"__proto__":"x"}],"ok":true}`,
          ) as unknown;
        }),
    });
    const server = await serve(router);
    servers.push(server);
    const send = () =>
      fetch(`${server.url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'proto-out' },
        body: JSON.stringify({ n: 7 }),
      });
    const first = await send();
    const firstText = await first.text();
    expect(firstText).toContain('"__proto__":{"n":7,"admin":true}');
    const replay = await send();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(firstText);
    expect(runs).toBe(1);
  });
});

describe('Operation names are bounded in the record and events', () => {
  it(`a 300 KB GraphQL operation name is stored and reported as ${MAX_OPERATION_NAME} characters and a marker; the fingerprint keeps the whole name`, async () => {
    const setup = sqlitePayments();
    const events: GuardEvent[] = [];
    const { yoga, harness } = paymentsServer({
      ...setup,
      guard: { onEvent: (event) => events.push(event) },
    });
    const name = `Pay${'x'.repeat(300_000)}`;
    const query = (suffix: string) => `mutation ${name}${suffix} { pay(amount: 5) { id } }`;
    const first = await gql(yoga, { query: query(''), key: 'long-name' });
    expect(first.status).toBe(200);
    const stored = setup.db.$client.prepare('select operation from idempotency_records').get() as {
      operation: string;
    };
    expect(stored.operation.length).toBeLessThanOrEqual(MAX_OPERATION_NAME + 30);
    expect(stored.operation.startsWith(name.slice(0, MAX_OPERATION_NAME))).toBe(true);
    expect(stored.operation).toContain(`(${name.length} chars)`);
    for (const event of events) expect(event.operation).toBe(stored.operation);
    // Same first 200 characters, another name: another request (S5, S6).
    const other = await gql(yoga, { query: query('y'), key: 'long-name' });
    expect(other.status).toBe(422);
    expect(harness.calls.pay).toBe(1);
  });
});
