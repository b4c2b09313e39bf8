import { getDirective } from '@graphql-tools/utils';
import {
  type DocumentNode,
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
  Kind,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { setupError } from '../core/errors.js';
import { IDEMPOTENCY_KEY_FIELD } from '../core/vocabulary.js';
import { IDEMPOTENT_DIRECTIVE } from './directive.js';
import type { OperationVariables } from './variables.js';

/**
 * How a root mutation field is guarded, written code-first as
 * `extensions: { idempotent: true }` or `extensions: { idempotent: { required: false } }`.
 */
export interface IdempotentFieldConfig {
  /** Refuse a request without a key (SPEC S3). @default the plugin's `required` */
  required?: boolean;
  /**
   * Milliseconds the stored result is replayed (SPEC S14), as every duration of the
   * package's TypeScript options; at least 1000. (In SDL: `@idempotent(retentionSeconds:)`.)
   * @default the plugin's `retention`, else the guard's
   */
  retention?: number;
}

/**
 * The shortest retention a field may set. A record kept for less than a second cannot
 * answer a retry, and a smaller number is most likely seconds written where milliseconds go
 * (the unit of `extensions.idempotent.retention` before 0.2.0).
 */
const MIN_FIELD_RETENTION_MS = 1000;

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
      throw setupError(
        `useIdempotency(): option \`fields\` names "${name}", which is not a field of the mutation type.`,
      );
    }
  }
  for (const def of Object.values(defs)) {
    const config = fieldConfig(schema, def, listed.includes(def.name));
    if (!config) continue;
    checkRetention(def.name, config.retention);
    const keyInputArguments = def.args
      .filter((arg) => {
        const type = getNamedType(arg.type);
        return isInputObjectType(type) && IDEMPOTENCY_KEY_FIELD in type.getFields();
      })
      .map((arg) => arg.name);
    fields.set(def.name, {
      name: def.name,
      def,
      required: config.required,
      retentionMs: config.retention,
      hasKeyArgument: def.args.some((arg) => arg.name === IDEMPOTENCY_KEY_FIELD),
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
  if (fromSdl) {
    const seconds: number | undefined = fromSdl.retentionSeconds ?? undefined;
    return {
      required: fromSdl.required ?? undefined,
      retention: seconds === undefined ? undefined : seconds * 1000,
    };
  }
  const fromCode = (def.extensions as { idempotent?: boolean | IdempotentFieldConfig } | undefined)
    ?.idempotent;
  if (fromCode === true) return {};
  if (fromCode && typeof fromCode === 'object') return fromCode;
  return listed ? {} : undefined;
}

/** Refuses a field's retention at start-up rather than on the field's first mutation. */
function checkRetention(field: string, retention: number | undefined): void {
  if (retention === undefined) return;
  if (!(Number.isFinite(retention) && retention >= MIN_FIELD_RETENTION_MS)) {
    throw setupError(
      `the mutation field "${field}" sets a retention of ${retention} ms; a field's retention is in milliseconds (retentionSeconds in SDL) and at least ${MIN_FIELD_RETENTION_MS}.`,
    );
  }
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
  variables: OperationVariables,
): GuardedSelection[] {
  const rootType = guards.mutationType;
  if (!rootType) return [];
  // One plain object per call instead of closures: this runs for every mutation.
  const walk: Walk = { schema, guards, rootType, fragments, variables, visited: [], found: [] };
  collectFrom(walk, operation.selectionSet);
  return walk.found;
}

interface Walk {
  schema: GraphQLSchema;
  guards: SchemaGuards;
  rootType: GraphQLObjectType;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  variables: OperationVariables;
  /** Fragments already walked (a spread seen twice is walked once). */
  visited: string[];
  found: GuardedSelection[];
}

function collectFrom(walk: Walk, selectionSet: SelectionSetNode): void {
  for (const selection of selectionSet.selections) {
    if (!included(selection, walk.variables)) continue;
    if (selection.kind === Kind.FIELD) {
      const field = walk.guards.fields.get(selection.name.value);
      if (field) walk.found.push({ node: selection, field });
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (conditionMatches(walk, selection.typeCondition?.name.value)) {
        collectFrom(walk, selection.selectionSet);
      }
    } else {
      const name = selection.name.value;
      const fragment = walk.fragments.get(name);
      if (walk.visited.includes(name) || !fragment) continue;
      walk.visited.push(name);
      if (conditionMatches(walk, fragment.typeCondition.name.value)) {
        collectFrom(walk, fragment.selectionSet);
      }
    }
  }
}

/** `@skip` and `@include` as execution reads them; most selections carry no directive. */
function included(node: SelectionNode, variables: OperationVariables): boolean {
  if (!node.directives?.length) return true;
  return (
    getDirectiveValues(GraphQLSkipDirective, node, variables.forExecution)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables.forExecution)?.if !== false
  );
}

function conditionMatches(walk: Walk, typeName: string | undefined): boolean {
  if (typeName === undefined || typeName === walk.rootType.name) return true;
  const type = walk.schema.getType(typeName);
  return !!type && isAbstractType(type) && walk.schema.isSubType(type, walk.rootType);
}

/**
 * The document's fragment definitions by name. Servers cache parsed documents, so a mutation
 * sent again arrives as the same `DocumentNode`: they are collected once per document.
 */
export function fragmentsOf(document: DocumentNode): ReadonlyMap<string, FragmentDefinitionNode> {
  let fragments = fragmentsByDocument.get(document);
  if (!fragments) {
    fragments = new Map();
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) {
        fragments.set(definition.name.value, definition);
      }
    }
    fragmentsByDocument.set(document, fragments);
  }
  return fragments;
}

const fragmentsByDocument = new WeakMap<DocumentNode, Map<string, FragmentDefinitionNode>>();
