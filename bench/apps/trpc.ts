/**
 * The tRPC app under test, served by tRPC's fetch adapter: `plain` without the library,
 * `plainTx` the same with the insert in a transaction of its own, `guarded` with
 * `idempotency()` concatenated onto the mutation, and `leastAdapter` and `leastReplay`, the
 * least any guarding middleware does on a fresh call and on a replay (below). superjson on
 * all, as the package's README wires it.
 */
import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import superjson from 'superjson';
import { z } from 'zod';
import { REPLAYED_HEADER } from '../../src/core/vocabulary.js';
import { createGuard } from '../../src/index.js';
import { idempotency } from '../../src/trpc/index.js';
import { replayOutcome, type StoredOutcome } from '../../src/trpc/outcome.js';
import type { BenchDb } from '../db/types.js';
import { leastReplayLookup } from './least-replay.js';
import { type LeastRequest, leastRequest } from './least-request.js';

interface Context {
  req: Request;
  resHeaders: Headers;
  info: unknown;
}

const payInput = z.object({ amount: z.number().int() });

export function trpcApps<Tx>(db: BenchDb<Tx>) {
  const t = initTRPC.context<Context>().create({ transformer: superjson });
  const guard = createGuard({ store: db.store, serializer: superjson });
  const guarded = idempotency({ guard, scope: (_ctx: Context) => 'bench' });

  const plainRouter = t.router({
    ping: t.procedure.query(() => 1),
    pay: t.procedure.input(payInput).mutation(async ({ input }) => ({
      id: await db.insert(input.amount),
      amount: input.amount,
    })),
  });
  const plainTxRouter = t.router({
    ping: t.procedure.query(() => 1),
    pay: t.procedure.input(payInput).mutation(async ({ input }) => ({
      id: await db.insertInTransaction(input.amount),
      amount: input.amount,
    })),
  });
  const guardedRouter = t.router({
    ping: t.procedure.query(() => 1),
    pay: t.procedure
      .input(payInput)
      .concat(guarded)
      .mutation(async ({ ctx, input }) => ({
        id: await db.insertTx(ctx.idempotency.tx, input.amount),
        amount: input.amount,
      })),
  });

  /**
   * The least a guarding middleware does on a fresh call, with no guard: a middleware
   * concatenated onto the mutation, as `idempotency()` is, that first does what it must before
   * it can know the call is fresh (`requestOf`: the key from the header and one SHA-256 of the
   * request, as the least replay takes them, least-request.ts), then hands the resolver a
   * transaction handle in its context and runs it where the store runs guarded work
   * (`db.workContext`). Built on a database whose `insert` stores a record too, it is the
   * adapter's fresh floor (bench/cases/surfaces.ts); that record carries a key and fingerprint
   * of the bench's own, not these (their work, not their values, is the point).
   */
  const leastMiddleware = initTRPC
    .context<Context>()
    .create()
    .procedure.use(({ ctx, path, input, next }) => {
      const { key } = requestOf(ctx, path, input);
      return db.workContext(() => next({ ctx: { idempotency: { tx: undefined, key } } }));
    });
  const leastAdapterRouter = t.router({
    ping: t.procedure.query(() => 1),
    pay: t.procedure
      .input(payInput)
      .concat(leastMiddleware)
      .mutation(async ({ input }) => ({
        id: await db.insert(input.amount),
        amount: input.amount,
      })),
  });

  /**
   * The least a guarding middleware does to answer a replay (least-replay.ts): the key from
   * the header, the request's digest and the record, whose stored outcome it parses and
   * returns, marked as a replay, without calling `next()`. The resolver never runs.
   */
  const lookup = leastReplayLookup(db);
  const leastReplayMiddleware = initTRPC
    .context<Context>()
    .create()
    .procedure.use(async ({ ctx, path, input }) => {
      const { key } = requestOf(ctx, path, input);
      const stored = await lookup(key);
      ctx.resHeaders.set(REPLAYED_HEADER, 'true');
      return replayOutcome<never>(superjson.parse<StoredOutcome>(stored));
    });
  // Its resolver must never run: should the middleware call `next()`, the check before timing
  // (bench/cases/surfaces.ts) gets an error instead of a replay.
  const leastReplayRouter = t.router({
    ping: t.procedure.query(() => 1),
    pay: t.procedure
      .input(payInput)
      .concat(leastReplayMiddleware)
      .mutation((): never => {
        throw new Error('bench: the least replay ran its resolver');
      }),
  });

  const serve =
    (
      router:
        | typeof plainRouter
        | typeof plainTxRouter
        | typeof guardedRouter
        | typeof leastAdapterRouter
        | typeof leastReplayRouter,
    ) =>
    (req: Request): Promise<Response> =>
      fetchRequestHandler({
        endpoint: '/trpc',
        req,
        router,
        createContext: ({ req, resHeaders, info }) => ({ req, resHeaders, info }),
      });
  return {
    plain: serve(plainRouter),
    plainTx: serve(plainTxRouter),
    guarded: serve(guardedRouter),
    leastAdapter: serve(leastAdapterRouter),
    leastReplay: serve(leastReplayRouter),
  };
}

/** The request's key and digest (least-request.ts): the digest of its path and validated input. */
function requestOf(ctx: Context, path: string, input: unknown): LeastRequest {
  return leastRequest(ctx.req.headers, JSON.stringify({ path, input }));
}

export const TRPC_PAY_BODY = JSON.stringify(superjson.serialize({ amount: 42 }));
