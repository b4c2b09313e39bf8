import {
  type ArgumentNode,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  Kind,
  print,
  visit,
} from 'graphql';
import { fingerprint } from '../index.js';
import { IDEMPOTENT_DIRECTIVE } from './directive.js';
import { type GuardedSelection, KEY_FIELD } from './fields.js';

/**
 * The operation's fingerprint (SPEC S5): the document as parsed and printed with the key
 * taken out, the operation name, and the coerced variables without the key. Literal
 * arguments are part of the printed document. Taking the key out means: on every guarded
 * root field, the `idempotencyKey` argument, the `idempotencyKey` field of object literals
 * passed to its arguments, and the client `@idempotent` directive; variables that carry the
 * key are dropped, and `idempotencyKey` is dropped from input-object variables passed to
 * a guarded field's key-carrying argument. A retry that moves the key from the header to an
 * argument still changes the document, and so the fingerprint: clients keep one habit.
 */
export function operationFingerprint(
  document: DocumentNode,
  operationName: string | undefined,
  selections: readonly GuardedSelection[],
  variables: Record<string, unknown>,
): string {
  const guarded = new Map<FieldNode, GuardedSelection>(selections.map((s) => [s.node, s]));
  const keyVariables = new Set<string>();
  const inputVariables = new Set<string>();

  const stripped = visit(document, {
    Field(node) {
      const selection = guarded.get(node);
      if (!selection) return undefined;
      const keyInputs = new Set(selection.field.keyInputArguments);
      const args: ArgumentNode[] = [];
      for (const arg of node.arguments ?? []) {
        if (arg.name.value === KEY_FIELD) {
          collectVariables(arg, keyVariables);
          continue;
        }
        if (arg.value.kind === Kind.VARIABLE && keyInputs.has(arg.name.value)) {
          inputVariables.add(arg.value.name.value);
        }
        if (arg.value.kind !== Kind.OBJECT) {
          args.push(arg);
          continue;
        }
        const fields = arg.value.fields.filter((field) => {
          if (field.name.value !== KEY_FIELD) return true;
          collectVariables(field, keyVariables);
          return false;
        });
        args.push({ ...arg, value: { ...arg.value, fields } });
      }
      const directives = (node.directives ?? []).filter((directive) => {
        if (directive.name.value !== IDEMPOTENT_DIRECTIVE) return true;
        collectVariables(directive, keyVariables);
        return false;
      });
      return { ...node, arguments: args, directives };
    },
  });

  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (keyVariables.has(name)) continue;
    input[name] =
      inputVariables.has(name) && value !== null && typeof value === 'object'
        ? withoutKey(value as Record<string, unknown>)
        : value;
  }
  return fingerprint({
    surface: 'graphql',
    operation: `${operationName ?? ''}\n${print(stripped)}`,
    input,
  });
}

function withoutKey(value: Record<string, unknown>): Record<string, unknown> {
  const { [KEY_FIELD]: _key, ...rest } = value;
  return rest;
}

function collectVariables(node: ASTNode, into: Set<string>): void {
  visit(node, {
    Variable(variable) {
      into.add(variable.name.value);
    },
  });
}
