import {
  type ExecutionArgs,
  GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { keyMissingError } from '../core/adapter.js';
import { IdempotencyError } from '../core/errors.js';
import type { FingerprintLimits } from '../core/fingerprint.js';
import { IDEMPOTENT_DIRECTIVE } from './directive.js';
import { toGraphQLError } from './errors.js';
import {
  collectGuardedSelections,
  fragmentsOf,
  type GuardedSelection,
  type SchemaGuards,
} from './fields.js';
import { operationFingerprint } from './fingerprint.js';
import { resolveOperationKey } from './key.js';
import { coerceVariables } from './variables.js';

/** What `onExecute` decided for a guarded mutation operation. */
export interface OperationPlan {
  key: string;
  fingerprint: string;
  /** The operation's name, or its guarded fields' names, for events. */
  name: string;
  retentionMs: number | undefined;
}

export interface PlanInput {
  args: ExecutionArgs;
  operation: OperationDefinitionNode;
  findGuards: (schema: GraphQLSchema) => SchemaGuards;
  header: string | null | undefined;
  /** The plugin's `required` option. */
  required: boolean;
  /** The plugin's `retention` option, for guarded fields without their own. */
  retention: number | undefined;
  /** The guard's bounds on the fingerprinted input (its `maxInputBytes`, `maxInputDepth`). */
  limits: Partial<FingerprintLimits>;
}

/**
 * Plans a mutation operation: `undefined` when it runs untouched (no guarded field, or no
 * key where none is required), an error to answer with before anything runs (S1-S3,
 * nothing stored: S13), or the key, fingerprint and retention for `guard.run`.
 */
export function planOperation({
  args,
  operation,
  findGuards,
  header,
  required,
  retention,
  limits,
}: PlanInput): OperationPlan | { error: GraphQLError } | undefined {
  const { schema, document } = args;
  const guards = findGuards(schema);
  if (guards.fields.size === 0) return undefined;
  const variables = coerceVariables(
    schema,
    operation.variableDefinitions ?? [],
    (args.variableValues ?? {}) as Record<string, unknown>,
  );
  // Invalid variables: execute reports them and runs nothing.
  if (!variables) return undefined;
  const selections = collectGuardedSelections(
    schema,
    guards,
    operation,
    fragmentsOf(document),
    variables,
  );
  if (selections.length === 0) return undefined;

  let key: string | undefined;
  try {
    const directive = schema.getDirective(IDEMPOTENT_DIRECTIVE) ?? undefined;
    key = resolveOperationKey(selections, header, variables, directive);
  } catch (error) {
    if (IdempotencyError.is(error)) return { error: toGraphQLError(error) };
    // An argument that does not coerce: answer as execute would, without running anything.
    if (error instanceof GraphQLError) return { error };
    throw error;
  }
  if (key === undefined) {
    if (!selections.some(({ field }) => field.required ?? required)) return undefined;
    const names = [...new Set(selections.map(({ field }) => field.name))];
    return { error: toGraphQLError(keyMissingError(names)) };
  }
  const operationName = operation.name?.value ?? args.operationName ?? undefined;
  let fingerprint: string;
  try {
    fingerprint = operationFingerprint(
      document,
      operationName,
      selections,
      variables.values,
      limits,
    );
  } catch (error) {
    // An input over the guard's bounds answers 413 before anything is claimed.
    if (IdempotencyError.is(error)) return { error: toGraphQLError(error) };
    throw error;
  }
  return {
    key,
    fingerprint,
    name: operationName ?? selections.map(({ field }) => field.name).join(','),
    retentionMs: longestRetention(selections, retention),
  };
}

/**
 * Several guarded fields in one operation: keep the record as long as any of them asks, a
 * field without its own retention asking for the plugin's. `undefined`: the guard's.
 */
function longestRetention(
  selections: readonly GuardedSelection[],
  pluginRetention: number | undefined,
): number | undefined {
  let longest: number | undefined;
  for (const { field } of selections) {
    const retention = field.retentionMs ?? pluginRetention;
    if (retention !== undefined && (longest === undefined || retention > longest)) {
      longest = retention;
    }
  }
  return longest;
}
