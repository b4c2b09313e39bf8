/**
 * What is stored for a tRPC call, and how a stored one becomes a middleware result again.
 * A success stores the procedure's output as it left the resolver (and any `.output()`
 * validator), before the app's transformer; a replay hands it back to tRPC, which runs the
 * transformer again, so the client gets the same response (SPEC S9).
 */
import { type TRPC_ERROR_CODE_KEY, TRPCError } from '@trpc/server';

export type StoredOutcome =
  | { ok: true; data: unknown }
  /** A final error kept Stripe-style (S12): code and message only, never the cause. */
  | { ok: false; error: { code: TRPC_ERROR_CODE_KEY; message: string } };

/** tRPC's middleware result, as `next()` returns it. */
export type CallResult<Marker> =
  | { ok: true; data: unknown; readonly marker: Marker }
  | { ok: false; error: TRPCError; readonly marker: Marker };

export function storeOutcome(result: CallResult<unknown>): StoredOutcome {
  if (result.ok) return { ok: true, data: result.data };
  return { ok: false, error: { code: result.error.code, message: result.error.message } };
}

// tRPC brands middleware results with this marker so that a middleware cannot forget to
// return `next()`'s result. A replay returns a result without calling `next()`, so it has to
// carry the same marker; tRPC checks it only in types.
const MIDDLEWARE_MARKER = 'middlewareMarker';

export function replayOutcome<Marker>(outcome: StoredOutcome): CallResult<Marker> {
  const marker = MIDDLEWARE_MARKER as Marker;
  if (outcome.ok) return { ok: true, data: outcome.data, marker };
  return { ok: false, error: new TRPCError(outcome.error), marker };
}

/** The key a client put in the input as `idempotencyKey`, if the input is an object. */
export function keyFromInput(input: unknown): unknown {
  return isPlainObject(input) ? input.idempotencyKey : undefined;
}

/** The input without its key, for the fingerprint (SPEC S5: the key is never part of it). */
export function inputWithoutKey(input: unknown): unknown {
  if (!isPlainObject(input) || !('idempotencyKey' in input)) return input;
  const { idempotencyKey: _key, ...rest } = input;
  return rest;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
