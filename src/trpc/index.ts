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
// The vocabulary both adapters share: options, context type, names, readKeyHeader.
export * from '../core/vocabulary.js';
export {
  type IdempotencyErrorData,
  idempotencyErrorData,
  idempotencyErrorFormatter,
  toTRPCError,
} from './errors.js';
export { type IdempotentProcedure, idempotency } from './middleware.js';
export { type IdempotencyMiddlewareOptions, readServerKey } from './options.js';
export {
  type RequestInfoLike,
  type ResponseHeadersLike,
  readRequestInfo,
  readResponseHeaders,
} from './request.js';
export { assertIdempotencySetup } from './setup.js';
