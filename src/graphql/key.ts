import { type GraphQLDirective, getArgumentValues, getDirectiveValues } from 'graphql';
import { type KeyCandidate, resolveKey } from '../core/keys.js';
import { IDEMPOTENCY_KEY_FIELD } from '../core/vocabulary.js';
import type { GuardedSelection } from './fields.js';
import type { OperationVariables } from './variables.js';

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
  variables: OperationVariables,
  directive: GraphQLDirective | undefined,
): string | undefined {
  const candidates: KeyCandidate[] = [{ source: 'header', value: header }];
  for (const { node, field } of selections) {
    // Aliases tell apart two selections of one field: `a: pay`, `b: pay`.
    const name = node.alias ? `${node.alias.value}: ${field.name}` : field.name;
    if (field.hasKeyArgument || field.keyInputArguments.length > 0) {
      const args = getArgumentValues(field.def, node, variables.forExecution);
      if (field.hasKeyArgument) {
        candidates.push({
          source: `${IDEMPOTENCY_KEY_FIELD} argument of \`${name}\``,
          value: args[IDEMPOTENCY_KEY_FIELD],
        });
      }
      for (const input of field.keyInputArguments) {
        const value = (args[input] as Record<string, unknown> | null | undefined)?.[
          IDEMPOTENCY_KEY_FIELD
        ];
        candidates.push({ source: `\`${input}.${IDEMPOTENCY_KEY_FIELD}\` of \`${name}\``, value });
      }
    }
    if (directive) {
      const value = getDirectiveValues(directive, node, variables.forExecution)?.key;
      candidates.push({ source: `@${directive.name}(key:) on \`${name}\``, value });
    }
  }
  return resolveKey(candidates);
}
