/**
 * The README's client example (examples/readme/clients.ts) runs as written, against the
 * README's own Yoga and tRPC servers over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { paymentsClient, payOrder } from '../../examples/readme/clients.js';
import { yoga } from '../../examples/readme/graphql-yoga.js';
import { handle } from '../../examples/readme/trpc.js';
import type { IdempotencyReceipt } from '../../src/client/trpc/index.js';

let server: Server;
let api: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/graphql')) {
      void yoga(req, res);
      return;
    }
    void toRequest(req).then(async (request) => {
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('S28: payOrder keys the intent with the order id, so paying the order again replays it', async () => {
  const order = { id: randomUUID(), amount: 12 };
  const first = await payOrder(api, order);
  const again = await payOrder(api, order); // after a reload, say
  expect(first.replayed).toBe(false);
  expect(again.replayed).toBe(true);
  expect(again.body).toEqual(first.body);
  expect(first.body.data.pay.amount).toBe(12);
});

it('S28: the tRPC client keys each mutation, and a new call is a new intent', async () => {
  const client = paymentsClient(api);
  const context: { idempotency?: IdempotencyReceipt } = {};
  const paid = await client.pay.mutate({ amount: 3 }, { context });
  const other = await client.pay.mutate({ amount: 3 });
  expect(paid.at).toBeInstanceOf(Date); // superjson both ways
  expect(context.idempotency).toMatchObject({ replayed: false, attempts: 1 });
  expect(other.id).not.toBe(paid.id);
  const own = { amount: 4, idempotencyKey: `order-${randomUUID()}` };
  const once = await client.pay.mutate(own);
  const twice = await client.pay.mutate(own, { context });
  expect(twice).toEqual(once);
  expect(context.idempotency).toMatchObject({ key: own.idempotencyKey, replayed: true });
});

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://localhost${req.url}`, { method: req.method, headers, body });
}
