/**
 * mutation-guard/trpc: makes tRPC v11 mutations safe to retry (SPEC S1-S20). Loads
 * `@trpc/server` (an optional peer of the package); the core never does.
 *
 *   const guard = createGuard({ store: sqliteStore(db), serializer: superjson });
 *   const t = initTRPC.context<Context>().create({
 *     transformer: superjson,
 *     errorFormatter: idempotencyErrorFormatter,
 *   });
 *   const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.userId });
 *   const pay = t.procedure.input(schema).concat(guarded).mutation(({ ctx }) => ctx.idempotency.tx);
 */
export {
  type IdempotencyErrorData,
  idempotencyErrorData,
  idempotencyErrorFormatter,
  toTRPCError,
} from './errors.js';
export { type IdempotencyContext, type IdempotentProcedure, idempotency } from './middleware.js';
export { GLOBAL_SCOPE, type IdempotencyMiddlewareOptions } from './options.js';
export type { HeadersLike, RequestInfoLike, ResponseHeadersLike } from './request.js';
export { assertIdempotencySetup } from './setup.js';
