import {
  initTRPC,
  TRPCError,
  type TRPCMiddlewareFunction,
  type TRPCProcedureBuilder,
  type TRPCUnsetMarker,
} from '@trpc/server';
import {
  checkAdapterOptions,
  keyMissingError,
  scopeOf,
  sharedHeaderKeyError,
} from '../core/adapter.js';
import { IdempotencyError } from '../core/errors.js';
import { fingerprint } from '../core/fingerprint.js';
import { resolveKey } from '../core/keys.js';
import { rollback } from '../core/rollback.js';
import {
  type IdempotencyContext,
  REPLAYED_HEADER,
  RETRY_AFTER_HEADER,
  readKeyHeader,
} from '../core/vocabulary.js';
import { toTRPCError } from './errors.js';
import { type IdempotencyMiddlewareOptions, readServerKey } from './options.js';
import {
  inputWithoutKey,
  keyFromInput,
  replayOutcome,
  type StoredOutcome,
  storeOutcome,
} from './outcome.js';
import { headerKeySharers, readRequestInfo, readResponseHeaders } from './request.js';
import {
  calledProcedureDef,
  isGuardedProcedure,
  markGuarded,
  setupMistake,
  unnamedCallMistake,
} from './setup.js';

/**
 * The procedure builder `idempotency()` returns: `.concat()` it onto your procedure, after
 * `.input(...)`, and the procedure's context gains `idempotency`.
 */
export type IdempotentProcedure<TContext extends object, TIdempotency> = TRPCProcedureBuilder<
  TContext,
  object,
  { idempotency: TIdempotency },
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  false,
  // `unknown` leaves the app's own error shape as it is when concatenated.
  unknown
>;

// Typed on a plain `object` context: tRPC's context types do not compose with a generic
// `TContext` inside, and the public type is declared by `IdempotentProcedure` anyway.
type Middleware<Tx> = TRPCMiddlewareFunction<
  object,
  object,
  object,
  { idempotency: IdempotencyContext<Tx> | undefined },
  unknown
>;
type Result<Tx> = Awaited<ReturnType<Middleware<Tx>>>;

/**
 * Makes mutation procedures safe to retry (SPEC S1-S20 for tRPC). Concatenate the result
 * onto a mutation after its input validator:
 *
 *   const pay = publicProcedure
 *     .input(z.object({ amount: z.number(), idempotencyKey: z.string().optional() }))
 *     .concat(idempotency({ guard, scope: (ctx: Context) => ctx.userId }))
 *     .mutation(({ ctx, input }) => charge(ctx.idempotency.tx, input));
 *
 * The key comes from `input.idempotencyKey`, the `Idempotency-Key` header or the context;
 * two that differ are a 400. Put before `.input()`, the fingerprint covers the raw input as
 * the client sent it instead of the validated one. Put `.output()` after it, so that output
 * validation runs inside the guard. On a query or subscription, or after an `.output()`, the
 * call fails with an `INTERNAL_SERVER_ERROR` naming the setup mistake before anything runs;
 * `assertIdempotencySetup(router)` finds both where the router is built (see setup.ts).
 */
export function idempotency<TContext extends object = object, Tx = unknown>(
  options: IdempotencyMiddlewareOptions<TContext, Tx> & { required: false },
): IdempotentProcedure<TContext, IdempotencyContext<Tx> | undefined>;
export function idempotency<TContext extends object = object, Tx = unknown>(
  options: IdempotencyMiddlewareOptions<TContext, Tx> & { required?: true },
): IdempotentProcedure<TContext, IdempotencyContext<Tx>>;
export function idempotency<TContext extends object = object, Tx = unknown>(
  options: IdempotencyMiddlewareOptions<TContext, Tx>,
): IdempotentProcedure<TContext, IdempotencyContext<Tx> | undefined>;
export function idempotency<TContext extends object = object, Tx = unknown>({
  guard,
  scope,
  required = true,
  isFinalError = () => false,
  retention,
  keyHeader = readKeyHeader,
  serverKey = readServerKey,
  responseHeaders = readResponseHeaders,
  requestInfo = readRequestInfo,
}: IdempotencyMiddlewareOptions<TContext, Tx>): IdempotentProcedure<
  TContext,
  IdempotencyContext<Tx> | undefined
> {
  checkAdapterOptions('idempotency()', { guard, scope });

  /** SPEC S1, S2, S20: the call's one key, or `undefined`; throws `IdempotencyError`s. */
  function keyOf(ctx: TContext, rawInput: unknown): string | undefined {
    const header = keyHeader(ctx);
    if (header !== undefined && header !== null) {
      const sharers = headerKeySharers(requestInfo(ctx), ctx, isGuardedProcedure);
      if (sharers > 1) throw sharedHeaderKeyError(sharers);
    }
    return resolveKey([
      { source: 'input', value: keyFromInput(rawInput) },
      { source: 'header', value: header },
      { source: 'context', value: serverKey(ctx) },
    ]);
  }

  function setResponseHeader(ctx: TContext, name: string, value: string): void {
    try {
      responseHeaders(ctx)?.set(name, value);
    } catch {
      // A header is a courtesy; failing to set it must not change the mutation's answer.
    }
  }

  const middleware: Middleware<Tx> = async function idempotencyMiddleware(opts) {
    const { type, path, next } = opts;
    const ctx = opts.ctx as TContext;
    // A setup mistake is refused before anything is claimed (see setup.ts). Checked before
    // the first await: without request info, the check reads this call's stack.
    const def = calledProcedureDef(requestInfo(ctx), opts.batchIndex, path);
    const mistake = def ? setupMistake(path, def) : unnamedCallMistake(path, type);
    if (mistake) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: mistake });
    const rawInput = await opts.getRawInput();
    let key: string | undefined;
    try {
      key = keyOf(ctx, rawInput);
      if (key === undefined && required) throw keyMissingError([path]);
    } catch (error) {
      throw IdempotencyError.is(error) ? toTRPCError(error) : error;
    }
    if (key === undefined) return next({ ctx: { idempotency: undefined } });

    const requestScope = await scopeOf(scope, ctx);
    // The validated input if a validator ran before us, else the raw one (see the JSDoc).
    const input = opts.input !== undefined ? opts.input : rawInput;
    let fresh: Result<Tx> | undefined;
    let run: { value: StoredOutcome; replayed: boolean };
    try {
      run = await guard.run<StoredOutcome>({
        scope: requestScope,
        key,
        fingerprint: fingerprint(
          {
            surface: 'trpc',
            operation: path,
            input: inputWithoutKey(input),
          },
          guard.options,
        ),
        operation: path,
        retention,
        work: async (tx, { keyHash }) => {
          const result = await next({
            ctx: { idempotency: { tx, key, keyHash, scope: requestScope } },
          });
          fresh = result;
          const outcome = storeOutcome(result);
          // `next()` reports a failed procedure as `ok: false` instead of throwing; its writes
          // must still roll back (S12), and only a declared final error is kept.
          return result.ok ? outcome : rollback(outcome, { keep: isFinalError(result.error) });
        },
      });
    } catch (error) {
      if (!IdempotencyError.is(error)) throw error;
      if (error.retryAfterSeconds !== undefined) {
        setResponseHeader(ctx, RETRY_AFTER_HEADER, String(error.retryAfterSeconds));
      }
      throw toTRPCError(error);
    }
    if (!run.replayed && fresh) return fresh;
    setResponseHeader(ctx, REPLAYED_HEADER, 'true');
    return replayOutcome(run.value);
  };
  markGuarded(middleware);

  const t = initTRPC.create();
  return t.procedure.use(middleware) as unknown as IdempotentProcedure<
    TContext,
    IdempotencyContext<Tx> | undefined
  >;
}
