import { getDirective } from '@graphql-tools/utils';
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getDirectiveValues,
  getNamedType,
  isAbstractType,
  isInputObjectType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { IDEMPOTENT_DIRECTIVE } from './directive.js';

/** The argument, and the input-object field, that carry a key (SPEC S1). */
export const KEY_FIELD = 'idempotencyKey';

/**
 * How a root mutation field is guarded, written code-first as
 * `extensions: { idempotent: true }` or `extensions: { idempotent: { required: false } }`.
 */
export interface IdempotentFieldConfig {
  /** Refuse a request without a key (SPEC S3). @default the plugin's `required` */
  required?: boolean;
  /** Seconds the stored result is replayed (SPEC S14). @default the guard's retention */
  retention?: number;
}

/** A guarded root field of one schema, with where its keys may come from. */
export interface GuardedField {
  name: string;
  def: GraphQLField<unknown, unknown>;
  required: boolean | undefined;
  retentionMs: number | undefined;
  /** The field has an `idempotencyKey` argument. */
  hasKeyArgument: boolean;
  /** Arguments of an input-object type that has an `idempotencyKey` field. */
  keyInputArguments: readonly string[];
}

export interface SchemaGuards {
  mutationType: GraphQLObjectType | undefined;
  fields: ReadonlyMap<string, GuardedField>;
}

/** A guarded root field as the operation selects it (aliases make several per field). */
export interface GuardedSelection {
  node: FieldNode;
  field: GuardedField;
}

/**
 * Finds the guarded root mutation fields of a schema once per schema: marked `@idempotent`
 * in SDL, marked code-first through `extensions.idempotent`, or listed in the options.
 * Cached per plugin and schema, so a schema swap (gateway reloads) is picked up.
 */
export function schemaGuardsFinder(
  listed: readonly string[],
): (schema: GraphQLSchema) => SchemaGuards {
  const cache = new WeakMap<GraphQLSchema, SchemaGuards>();
  return function findSchemaGuards(schema) {
    let guards = cache.get(schema);
    if (!guards) {
      guards = readSchemaGuards(schema, listed);
      cache.set(schema, guards);
    }
    return guards;
  };
}

function readSchemaGuards(schema: GraphQLSchema, listed: readonly string[]): SchemaGuards {
  const mutationType = schema.getMutationType() ?? undefined;
  const fields = new Map<string, GuardedField>();
  const defs = mutationType?.getFields() ?? {};
  for (const name of listed) {
    if (!defs[name]) {
      // A typo here would leave a mutation unguarded without a word: refuse it instead.
      throw new TypeError(
        `useIdempotency: option \`fields\` names "${name}", which is not a field of the mutation type.`,
      );
    }
  }
  for (const def of Object.values(defs)) {
    const config = fieldConfig(schema, def, listed.includes(def.name));
    if (!config) continue;
    const keyInputArguments = def.args
      .filter((arg) => {
        const type = getNamedType(arg.type);
        return isInputObjectType(type) && KEY_FIELD in type.getFields();
      })
      .map((arg) => arg.name);
    fields.set(def.name, {
      name: def.name,
      def,
      required: config.required,
      retentionMs: config.retention === undefined ? undefined : config.retention * 1000,
      hasKeyArgument: def.args.some((arg) => arg.name === KEY_FIELD),
      keyInputArguments,
    });
  }
  return { mutationType, fields };
}

function fieldConfig(
  schema: GraphQLSchema,
  def: GraphQLField<unknown, unknown>,
  listed: boolean,
): IdempotentFieldConfig | undefined {
  const fromSdl = getDirective(schema, def, IDEMPOTENT_DIRECTIVE)?.[0];
  if (fromSdl)
    return { required: fromSdl.required ?? undefined, retention: fromSdl.retention ?? undefined };
  const fromCode = (def.extensions as { idempotent?: boolean | IdempotentFieldConfig } | undefined)
    ?.idempotent;
  if (fromCode === true) return {};
  if (fromCode && typeof fromCode === 'object') return fromCode;
  return listed ? {} : undefined;
}

/**
 * The guarded root fields the operation will execute, reached directly or through
 * fragment spreads and inline fragments, with `@skip` and `@include` applied as execution
 * applies them (SPEC S18).
 */
export function collectGuardedSelections(
  schema: GraphQLSchema,
  guards: SchemaGuards,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): GuardedSelection[] {
  const found: GuardedSelection[] = [];
  const visited = new Set<string>();
  const rootType = guards.mutationType;
  if (!rootType) return found;

  const included = (node: Parameters<typeof getDirectiveValues>[1]) =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  const conditionMatches = (typeName: string | undefined) => {
    if (typeName === undefined || typeName === rootType.name) return true;
    const type = schema.getType(typeName);
    return !!type && isAbstractType(type) && schema.isSubType(type, rootType);
  };

  const walk = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (!included(selection)) continue;
      if (selection.kind === 'Field') {
        const field = guards.fields.get(selection.name.value);
        if (field) found.push({ node: selection, field });
      } else if (selection.kind === 'InlineFragment') {
        if (conditionMatches(selection.typeCondition?.name.value)) walk(selection.selectionSet);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (visited.has(name) || !fragment) continue;
        visited.add(name);
        if (conditionMatches(fragment.typeCondition.name.value)) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return found;
}
