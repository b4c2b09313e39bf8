import {
  type ArgumentNode,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  Kind,
  print,
  stripIgnoredCharacters,
  visit,
} from 'graphql';
import { type FingerprintLimits, fingerprint } from '../core/fingerprint.js';
import { IDEMPOTENCY_KEY_FIELD } from '../core/vocabulary.js';
import { IDEMPOTENT_DIRECTIVE } from './directive.js';
import type { GuardedSelection } from './fields.js';
import { assertLiteralDepth } from './literal-depth.js';

/**
 * The operation's fingerprint (SPEC S5): the document as parsed and printed with the key
 * taken out, the operation name, and the coerced variables without the key. Literal
 * arguments are part of the printed document: its text counts toward `maxInputBytes`, and
 * their nesting toward `maxInputDepth` as a variable's would (see literal-depth.ts). Taking the key out means: on every guarded
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
  limits?: Partial<FingerprintLimits>,
): string {
  assertLiteralDepth(document, limits);
  const { printed, keyVariables, inputVariables } = strippedOperation(
    document,
    operationName,
    selections,
  );
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (keyVariables.has(name)) continue;
    input[name] =
      inputVariables.has(name) && value !== null && typeof value === 'object'
        ? withoutKey(value as Record<string, unknown>)
        : value;
  }
  return fingerprint({ surface: 'graphql', operation: printed, input }, limits);
}

/** The operation's text without the key, and which variables carry (or contain) the key. */
interface StrippedOperation {
  printed: string;
  keyVariables: ReadonlySet<string>;
  inputVariables: ReadonlySet<string>;
}

interface CachedStrip extends StrippedOperation {
  operationName: string | undefined;
  selections: readonly GuardedSelection[];
}

/**
 * Servers cache parsed documents, so a mutation sent again arrives as the same
 * `DocumentNode`: strip and print it once per document and guarded selection, not on every
 * request (printing is most of the fingerprint's cost).
 */
const stripCache = new WeakMap<DocumentNode, CachedStrip[]>();

function strippedOperation(
  document: DocumentNode,
  operationName: string | undefined,
  selections: readonly GuardedSelection[],
): StrippedOperation {
  const cached = stripCache.get(document) ?? [];
  const hit = cached.find(
    (entry) =>
      entry.operationName === operationName &&
      entry.selections.length === selections.length &&
      entry.selections.every(
        (s, i) => s.node === selections[i]!.node && s.field === selections[i]!.field,
      ),
  );
  if (hit) return hit;
  const stripped = stripKey(document, selections);
  const entry = {
    operationName,
    selections,
    ...stripped,
    printed: `${operationName ?? ''}\n${stripped.printed}`,
  };
  // @skip/@include on variables can select other fields: keep a few variants per document.
  stripCache.set(document, [entry, ...cached.slice(0, 7)]);
  return entry;
}

function stripKey(
  document: DocumentNode,
  selections: readonly GuardedSelection[],
): StrippedOperation {
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
        if (arg.name.value === IDEMPOTENCY_KEY_FIELD) {
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
          if (field.name.value !== IDEMPOTENCY_KEY_FIELD) return true;
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
  // Printed, then stripped of ignored characters: graphql 17's printer wraps and indents
  // nested literals, so its text grows with their depth squared; the stripped text is the
  // same small one on graphql 16 and 17, and weighs (maxInputBytes) about what was sent.
  return { printed: stripIgnoredCharacters(print(stripped)), keyVariables, inputVariables };
}

function withoutKey(value: Record<string, unknown>): Record<string, unknown> {
  const { [IDEMPOTENCY_KEY_FIELD]: _key, ...rest } = value;
  return rest;
}

function collectVariables(node: ASTNode, into: Set<string>): void {
  visit(node, {
    Variable(variable) {
      into.add(variable.name.value);
    },
  });
}
