import {
  type GraphQLSchema,
  type getArgumentValues,
  getVariableValues,
  type VariableDefinitionNode,
  versionInfo,
} from 'graphql';

/** What `getArgumentValues` and `getDirectiveValues` take as variables, on either major. */
type VariablesForExecution = Parameters<typeof getArgumentValues>[2];

/**
 * An operation's variables in the two shapes the guard needs: `values`, the plain record
 * that is fingerprinted (S5), and `forExecution`, what graphql-js's value helpers take back.
 * graphql 16 takes the coerced record itself; graphql 17 takes `{ sources, coerced }`.
 */
export interface OperationVariables {
  readonly values: Record<string, unknown>;
  readonly forExecution: VariablesForExecution;
}

/** graphql 16's and 17's `getVariableValues` results, read without either's types. */
interface CoercionResult {
  errors?: readonly unknown[];
  coerced?: Record<string, unknown>;
  variableValues?: { coerced: Record<string, unknown> };
}

/**
 * Coerces the request's variables as execution will; undefined when they do not coerce
 * (execution reports that itself and runs nothing).
 */
export function coerceVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  inputs: Record<string, unknown>,
): OperationVariables | undefined {
  const result = getVariableValues(schema, definitions, inputs) as CoercionResult;
  if (result.errors) return undefined;
  if (result.variableValues) {
    const values = result.variableValues.coerced;
    return { values, forExecution: result.variableValues as VariablesForExecution };
  }
  const values = result.coerced ?? {};
  return { values, forExecution: values as unknown as VariablesForExecution };
}

/**
 * Variables taken as sent, not coerced: for the cheap look at a request before execution
 * (http.ts), where an uncoercible value only makes the look less exact.
 */
export function uncoercedVariables(values: Record<string, unknown>): OperationVariables {
  const forExecution = versionInfo.major >= 17 ? { sources: {}, coerced: values } : values;
  return { values, forExecution: forExecution as unknown as VariablesForExecution };
}
