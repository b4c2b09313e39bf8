/**
 * Whether an `.output()` validator runs before the middleware, for calls whose procedure tRPC
 * does not name (`createCaller`, or a context without `info`): see setup.ts for why that
 * order is refused.
 *
 * tRPC hands a middleware neither its procedure nor a hook where the procedure is built, and
 * `createCaller` passes no request info, so the one trace of the middlewares that run before
 * this one is the call itself: each of them is still running, inside `next()`. tRPC's output
 * validator awaits `next()`, so on Node (V8 keeps the frames of awaiting async functions in
 * a stack trace) it shows on the middleware's stack, between it and the tRPC `procedure`
 * that began the call. Reading stops at that frame: a procedure called from inside another
 * one's resolver must not be blamed for the outer procedure's validator.
 *
 * This is a fallback behind the checks that read the procedure itself (HTTP request info,
 * `assertIdempotencySetup`). It only ever refuses what it sees: a stack it cannot read to
 * the procedure (a minified tRPC, a chain longer than `MAX_FRAMES`) finds nothing, and the
 * call runs as it would have without the check.
 */
import { initTRPC } from '@trpc/server';

/** Frames read at most: a few per middleware, so chains of dozens of middlewares fit. */
const MAX_FRAMES = 200;

/** True when tRPC's output validator is on the current call's stack, below its procedure. */
export function outputValidatorAbove(): boolean {
  const names = trpcNames();
  if (!names) return false;
  for (const site of callSites()) {
    const name = site.getFunctionName();
    if (name === names.procedure) return false;
    if (name === names.output) return true;
  }
  return false;
}

/** The current stack as V8's call sites, innermost first, without formatting it as text. */
function callSites(): NodeJS.CallSite[] {
  const { stackTraceLimit, prepareStackTrace } = Error;
  const holder: { stack?: unknown } = {};
  try {
    Error.stackTraceLimit = MAX_FRAMES;
    Error.prepareStackTrace = (_error, sites) => sites;
    Error.captureStackTrace(holder, outputValidatorAbove);
    return Array.isArray(holder.stack) ? (holder.stack as NodeJS.CallSite[]) : [];
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  }
}

interface TrpcNames {
  /** The function `.output()` adds as a middleware. */
  output: string;
  /** The function a built procedure is, which runs its middlewares. */
  procedure: string;
}

let names: TrpcNames | null | undefined;

/**
 * The names of tRPC's functions as the installed tRPC has them, read once from a procedure
 * built for the purpose. `null` when they are too short to tell from other frames (a
 * minified build's `e` or `Xt`): the check is then off.
 */
function trpcNames(): TrpcNames | null {
  if (names === undefined) {
    const t = initTRPC.create();
    const output = t.procedure.output((value: unknown) => value)._def.middlewares[0]?.name ?? '';
    const procedure = t.procedure.mutation(() => undefined).name;
    names =
      output.length >= 8 && procedure.length >= 8 && output !== procedure
        ? { output, procedure }
        : null;
  }
  return names;
}
