/**
 * Setup mistakes tRPC's builder cannot refuse for us. tRPC hands a middleware neither the
 * procedure it belongs to nor any hook when `.concat()`, `.query()` or `t.router()` runs, so
 * a mistake is caught in two places:
 *
 * - `assertIdempotencySetup(router)` checks every procedure of a router at once, where the
 *   app builds it (and covers `createCaller`);
 * - the middleware checks each call before anything is claimed: the procedure itself when
 *   tRPC's request info names it (HTTP); otherwise (`createCaller`, a context without `info`)
 *   the call's type, and an `.output()` before the guard found on the call's stack
 *   (call-chain.ts).
 *
 * The mistakes: the middleware on a query or subscription (only mutations are guarded,
 * SPEC S17), and an `.output()` validator placed before it. tRPC runs a procedure's
 * middlewares in the order they were added, and an output validator checks what the
 * middlewares after it returned. Before the guard, it checks after the transaction has
 * committed and the result has been stored: a failed check answers 500 for a write that
 * happened, and every retry replays into the same 500 (SPEC S8, S12).
 */
import type { AnyTRPCRouter } from '@trpc/server';
import { outputValidatorAbove } from './call-chain.js';
import type { RequestInfoLike } from './request.js';

// Marks our middleware functions, so that any instance of the middleware (even from another
// copy of the package) is recognised in a procedure's middleware list.
const GUARDED = Symbol.for('mutation-guard.trpc.middleware');

export function markGuarded(middleware: object): void {
  Object.defineProperty(middleware, GUARDED, { value: true });
}

/** The part of a tRPC procedure's `_def` these checks read. */
interface ProcedureDefLike {
  type?: unknown;
  middlewares?: unknown;
}

/** Why the procedure at `path` is guarded wrongly, or `undefined` when it is fine or unguarded. */
export function setupMistake(path: string, def: ProcedureDefLike): string | undefined {
  return describe(path, mistakeIn(def), def.type);
}

/**
 * The same for a call whose procedure tRPC does not name: the type the call says, and an
 * `.output()` validator running before the guard, found on the call's stack. Call it
 * synchronously where the middleware starts, before it awaits anything.
 */
export function unnamedCallMistake(path: string, type: string): string | undefined {
  if (type !== 'mutation') return describe(path, 'not a mutation', type);
  return outputValidatorAbove() ? describe(path, 'output before the guard', type) : undefined;
}

function describe(path: string, mistake: Mistake, type: unknown): string | undefined {
  switch (mistake) {
    case 'not a mutation':
      return `mutation-guard: idempotency() guards mutations only, but "${path}" is a ${String(type)}; remove it from this procedure.`;
    case 'output before the guard':
      return `mutation-guard: "${path}" has .output() before .concat(idempotency(...)), so its output would be checked after the result is committed and stored; put .output() after .concat(idempotency(...)).`;
    default:
      return undefined;
  }
}

type Mistake = 'not a mutation' | 'output before the guard' | 'none';

/**
 * A built procedure's `_def` does not change, and the middleware asks about it on every
 * call: the answer is kept per definition.
 */
const mistakes = new WeakMap<ProcedureDefLike, Mistake>();

function mistakeIn(def: ProcedureDefLike): Mistake {
  let mistake = mistakes.get(def);
  if (mistake === undefined) {
    mistake = findMistake(def);
    mistakes.set(def, mistake);
  }
  return mistake;
}

function findMistake(def: ProcedureDefLike): Mistake {
  const middlewares: unknown[] = Array.isArray(def.middlewares) ? def.middlewares : [];
  const guardAt = middlewares.findIndex(isGuardedMiddleware);
  if (guardAt === -1) return 'none';
  if (def.type !== 'mutation') return 'not a mutation';
  if (middlewares.slice(0, guardAt).some(isOutputValidator)) return 'output before the guard';
  return 'none';
}

/**
 * Throws a `TypeError` naming every procedure of `router` that guards a query or
 * subscription, or validates its output before the guard; returns the router otherwise.
 * Call it where you build the router: `export const appRouter = assertIdempotencySetup(t.router({...}))`.
 * Procedures of lazy sub-routers are checked by the middleware when they are called.
 */
export function assertIdempotencySetup<TRouter extends AnyTRPCRouter>(router: TRouter): TRouter {
  const procedures = router._def.procedures as Record<string, { _def?: ProcedureDefLike }>;
  const mistakes = Object.entries(procedures)
    .map(([path, procedure]) => setupMistake(path, procedure._def ?? {}))
    .filter((mistake) => mistake !== undefined);
  if (mistakes.length > 0) throw new TypeError(mistakes.join('\n'));
  return router;
}

/** The called procedure's `_def`, when tRPC's request info names it (HTTP adapters). */
export function calledProcedureDef(
  info: RequestInfoLike | undefined,
  batchIndex: number,
  path: string,
): ProcedureDefLike | undefined {
  const call = info?.calls[batchIndex];
  // A server-side caller inside a procedure may pass on its request's context: the info
  // then names that request's procedure, not this one.
  if (!call || call.path !== path) return undefined;
  return (call.procedure as { _def?: ProcedureDefLike } | null)?._def;
}

/** Whether a procedure from tRPC's request info is a mutation guarded by this middleware. */
export function isGuardedProcedure(procedure: unknown): boolean {
  const def = (procedure as { _def?: ProcedureDefLike } | null)?._def;
  if (def?.type !== 'mutation' || !Array.isArray(def.middlewares)) return false;
  return def.middlewares.some(isGuardedMiddleware);
}

function isGuardedMiddleware(fn: unknown): boolean {
  return (fn as { [GUARDED]?: boolean } | null)?.[GUARDED] === true;
}

/** tRPC tags the middleware `.output()` adds with `_type: 'output'`. */
function isOutputValidator(fn: unknown): boolean {
  return (fn as { _type?: unknown } | null)?._type === 'output';
}
