/**
 * The tRPC surface: `payments.create` (guarded) and `payments.list`. No transformer, so any
 * HTTP client can call it with plain JSON:
 *
 *   POST /trpc/payments.create   {"amount":1299,"currency":"EUR","customerId":"cus_42","idempotencyKey":"k1"}
 *   GET  /trpc/payments.list
 */
import { initTRPC, type TRPCDefaultErrorShape, TRPCError } from '@trpc/server';
import type { CreateHTTPContextOptions } from '@trpc/server/adapters/standalone';
import { z } from 'zod';
import type { Guard } from '../../src/index.js';
import { idempotency, idempotencyErrorFormatter } from '../../src/trpc/index.js';
import { accountFromAuthorization, UNAUTHENTICATED_MESSAGE } from './auth.js';
import { paymentInputSchema, paymentValidationError } from './payment.js';
import type { PaymentsService } from './payments-service.js';

/**
 * The node adapter's options go into the context as they are: the middleware reads the
 * `Idempotency-Key` header from `req`, writes `Idempotent-Replayed` / `Retry-After` with
 * `res.setHeader`, and checks batches with `info` (one header key for a whole batch is ambiguous).
 */
export function createContext({ req, res, info }: CreateHTTPContextOptions) {
  return { req, res, info, accountId: accountFromAuthorization(req.headers.authorization) };
}
type Context = Awaited<ReturnType<typeof createContext>>;

const t = initTRPC.context<Context>().create({
  errorFormatter: formatError,
  // No stack traces in answers: this is a service, even when NODE_ENV is unset.
  isDev: false,
});

/** Every procedure needs an account; it is checked before input validation and the guard. */
const authed = t.procedure.use(function requireAccount({ ctx, next }) {
  if (!ctx.accountId)
    throw new TRPCError({ code: 'UNAUTHORIZED', message: UNAUTHENTICATED_MESSAGE });
  return next({ ctx: { accountId: ctx.accountId } });
});

/** The same rules as GraphQL (payment.ts), plus the key, which tRPC reads from the input. */
const createInput = paymentInputSchema.extend({ idempotencyKey: z.string().optional() });

export function createTrpcRouter<Tx>(guard: Guard<Tx>, service: PaymentsService<Tx>) {
  const guarded = idempotency({ guard, scope: (ctx: { accountId: string }) => ctx.accountId });
  return t.router({
    payments: t.router({
      create: authed
        .input(createInput) // a bad input is a 400 BAD_REQUEST before anything is claimed
        .concat(guarded) // after .input(): the fingerprint covers the validated input
        .mutation(({ ctx, input: { idempotencyKey: _key, ...payment } }) =>
          service.create(ctx.idempotency.tx, ctx.accountId, payment),
        ),
      list: authed.query(({ ctx }) => service.list(ctx.accountId)),
    }),
  });
}

export type PaymentsRouter = ReturnType<typeof createTrpcRouter>;

/**
 * `idempotencyErrorFormatter` adds `data.idempotencyCode` (IDEMPOTENCY_KEY_IN_USE, ...) to
 * error bodies. A failed input validation also gets the same readable message as GraphQL,
 * instead of zod's JSON dump, and its issues per field in `data.issues`.
 */
function formatError(opts: { shape: TRPCDefaultErrorShape; error: TRPCError }) {
  const shape = idempotencyErrorFormatter(opts);
  const { cause } = opts.error;
  if (opts.error.code !== 'BAD_REQUEST' || !(cause instanceof z.ZodError)) return shape;
  const invalid = paymentValidationError(cause);
  return { ...shape, message: invalid.message, data: { ...shape.data, issues: invalid.issues } };
}
