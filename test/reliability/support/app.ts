/**
 * The payments service the reliability suite attacks: one node:http listener serving the
 * same `pay` mutation over tRPC (`/trpc/pay`) and, when asked, GraphQL Yoga (`/graphql`),
 * both guarded by one guard, each run writing one row to the payments table through the
 * guarded transaction. Deliberately independent of examples/payments.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { Guard } from '../../../src/index.js';
import { idempotency, idempotencyErrorFormatter } from '../../../src/trpc/index.js';
import type { Backend } from './backend.js';

export interface PaymentsAppOptions {
  /** How long each run sits inside its transaction, so that duplicates overlap (409s). */
  delayMs?: number;
  /** Body limit for both surfaces. @default 256 KiB */
  maxBodyBytes?: number;
  /** Also serve `/graphql` (loads graphql-yoga: about 1.5 s of start-up). @default false */
  graphql?: boolean;
}

/** What a successful `pay` answers (and what every replay must repeat exactly, S9). */
export interface PaymentAnswer {
  paymentId: number;
  scope: string;
  amount: number;
  /** Which process ran it: a replay from another process still carries the first one's. */
  pid: number;
}

/** The business effect both surfaces share: one payment row, written through `tx`. */
export type Pay = (
  tx: unknown,
  scope: string,
  key: string,
  amount: number,
) => Promise<PaymentAnswer>;

interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  account: string;
}

export async function paymentsApp(
  guard: Guard<unknown>,
  backend: Backend,
  options: PaymentsAppOptions = {},
): Promise<RequestListener> {
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  const pay: Pay = async (tx, scope, key, amount) => {
    const paymentId = await backend.insertPayment(tx, { scope, key, amount });
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    return { paymentId, scope, amount, pid: process.pid };
  };

  // isDev: false, as in production: no stack traces in answers.
  const t = initTRPC
    .context<Context>()
    .create({ errorFormatter: idempotencyErrorFormatter, isDev: false });
  const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.account });
  const router = t.router({
    pay: t.procedure
      .input(payInput)
      .concat(guarded)
      .mutation(({ ctx, input }) =>
        pay(ctx.idempotency.tx, ctx.idempotency.scope, ctx.idempotency.key, input.amount),
      ),
  });
  const trpc = createHTTPHandler({
    router,
    basePath: '/trpc/',
    maxBodySize: maxBodyBytes,
    createContext: ({ req, res }) => ({ req, res, account: accountOf(req.headers['x-account']) }),
  });
  const graphql = options.graphql
    ? (await import('./graphql-app.js')).graphqlHandler(guard, pay, accountOf)
    : undefined;

  return function paymentsListener(req, res) {
    const url = req.url ?? '/';
    if (url.startsWith('/trpc/')) return void trpc(req, res);
    if (graphql && url.startsWith('/graphql')) {
      if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
        // Yoga reads any body; the app caps it, as a real deployment's proxy would.
        res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"too large"}');
        return;
      }
      return void graphql(req, res);
    }
    res.writeHead(404).end();
  };
}

/**
 * The input validator (a plain function; tRPC accepts those), written out by hand so the
 * server process does not load zod at start-up.
 */
function payInput(raw: unknown): { amount: number; idempotencyKey?: string } {
  const input = raw as { amount?: unknown; idempotencyKey?: unknown } | null;
  const amount = input?.amount;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > 1e6) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'amount: an integer from 1 to 1000000' });
  }
  const key = input?.idempotencyKey;
  if (key !== undefined && typeof key !== 'string') {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'idempotencyKey: a string' });
  }
  return key === undefined ? { amount } : { amount, idempotencyKey: key };
}

/** The account (scope, S4) from the `x-account` header; one default account otherwise. */
function accountOf(value: string | string[] | null | undefined): string {
  return typeof value === 'string' && value.length > 0 ? value : 'acct_default';
}
