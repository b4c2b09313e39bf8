import { type GraphQLDirective, getArgumentValues, getDirectiveValues } from 'graphql';
import { type KeyCandidate, resolveKey } from '../index.js';
import { type GuardedSelection, KEY_FIELD } from './fields.js';

/** The `Idempotency-Key` request header, as servers name it (case does not matter). */
export const KEY_HEADER = 'Idempotency-Key';

/**
 * The operation's one key (SPEC S1, S18), from the header and, for every guarded field it
 * selects, the field's `idempotencyKey` argument, the `idempotencyKey` of its input-object
 * arguments and the client directive's `key`. Values are coerced (variables substituted), so
 * `pay(idempotencyKey: $k)` and `pay(idempotencyKey: "k")` are the same key.
 *
 * Throws `IDEMPOTENCY_KEY_INVALID` for a malformed key (S2) or for two sources, or two
 * guarded fields, that disagree; returns `undefined` when no source gave a key.
 */
export function resolveOperationKey(
  selections: readonly GuardedSelection[],
  header: string | null | undefined,
  variables: Record<string, unknown>,
  directive: GraphQLDirective | undefined,
): string | undefined {
  const candidates: KeyCandidate[] = [{ source: 'header', value: header }];
  for (const { node, field } of selections) {
    // Aliases tell apart two selections of one field: `a: pay`, `b: pay`.
    const name = node.alias ? `${node.alias.value}: ${field.name}` : field.name;
    if (field.hasKeyArgument || field.keyInputArguments.length > 0) {
      const args = getArgumentValues(field.def, node, variables);
      if (field.hasKeyArgument) {
        candidates.push({ source: `${KEY_FIELD} argument of \`${name}\``, value: args[KEY_FIELD] });
      }
      for (const input of field.keyInputArguments) {
        const value = (args[input] as Record<string, unknown> | null | undefined)?.[KEY_FIELD];
        candidates.push({ source: `\`${input}.${KEY_FIELD}\` of \`${name}\``, value });
      }
    }
    if (directive) {
      const value = getDirectiveValues(directive, node, variables)?.key;
      candidates.push({ source: `@${directive.name}(key:) on \`${name}\``, value });
    }
  }
  return resolveKey(candidates);
}

/**
 * Reads the header from the context: a Fetch `Request` (Yoga, Hono, ...) at
 * `context.request`, or a Node `IncomingMessage` at `context.req` (Express, Fastify).
 */
export function readKeyHeader(context: unknown): string | null | undefined {
  const ctx = context as {
    request?: { headers?: { get?: (name: string) => string | null } };
    req?: { headers?: Record<string, string | string[] | undefined> };
  } | null;
  const fromFetch = ctx?.request?.headers?.get?.(KEY_HEADER);
  if (fromFetch !== undefined) return fromFetch;
  const fromNode = ctx?.req?.headers?.[KEY_HEADER.toLowerCase()];
  // Several headers of the same name are joined, which then fails validation: ambiguous.
  return Array.isArray(fromNode) ? fromNode.join(', ') : fromNode;
}
