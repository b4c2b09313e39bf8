/**
 * What both adapters do the same way, in the words of vocabulary.ts: the checks when they are
 * created, the scope of a request, and the 400s whose wording they share. Internal: the
 * adapters import it, nothing exports it.
 */
import { IdempotencyError, setupError } from './errors.js';
import { GLOBAL_SCOPE, IDEMPOTENCY_KEY_FIELD, IDEMPOTENCY_KEY_HEADER } from './vocabulary.js';

/**
 * The checks both adapters make when they are created: a guard is required, and a missing
 * `scope` is said once, at start-up, not per request (SPEC S4). `adapter` names the factory.
 */
export function checkAdapterOptions(
  adapter: string,
  options: { guard?: unknown; scope?: unknown },
): void {
  if (!options.guard) throw setupError(`${adapter}: the \`guard\` option is required.`);
  if (!options.scope) {
    console.warn(
      `mutation-guard: ${adapter} has no \`scope\` option, so all clients share one global scope and one key space. Pass \`scope: (ctx) => ctx.accountId\` (say) to keep their keys apart.`,
    );
  }
}

/**
 * The scope of one request: what the `scope` option returns, or `GLOBAL_SCOPE` without one.
 * A value that is not a string is a bug in the app's setup, not a store outage (S15): it is
 * refused with a setup error (clients see a masked 500) instead of letting the store fail on it.
 */
export async function scopeOf<TContext>(
  scope: ((context: TContext) => string | Promise<string>) | undefined,
  context: TContext,
): Promise<string> {
  if (!scope) return GLOBAL_SCOPE;
  const value: unknown = await scope(context);
  if (typeof value === 'string') return value;
  const got = value === null ? 'null' : typeof value;
  throw setupError(`the \`scope\` option must return a string, but it returned ${got}.`);
}

/** SPEC S3: the 400 for a guarded mutation sent without a key, naming the mutation(s). */
export function keyMissingError(mutations: readonly string[]): IdempotencyError {
  const names = mutations.map((name) => `\`${name}\``).join(', ');
  return new IdempotencyError(
    'IDEMPOTENCY_KEY_MISSING',
    `The mutation ${names} needs an idempotency key: send the ${IDEMPOTENCY_KEY_HEADER} header, or the key as \`${IDEMPOTENCY_KEY_FIELD}\` in its input.`,
  );
}

/**
 * SPEC S20: the 400 for one `Idempotency-Key` header sent for `count` guarded mutations of
 * one batch, which cannot say which of them it keys.
 */
export function sharedHeaderKeyError(count: number): IdempotencyError {
  return new IdempotencyError(
    'IDEMPOTENCY_KEY_INVALID',
    `One ${IDEMPOTENCY_KEY_HEADER} header cannot key the ${count} guarded mutations of one batch; send each mutation's key as \`${IDEMPOTENCY_KEY_FIELD}\` in its input, or send them one by one.`,
  );
}
