/**
 * The depth bound for GraphQL literal arguments (SPEC S5). The input a guarded operation is
 * fingerprinted on is its variables and its literal arguments, but literals reach the
 * fingerprint as part of the printed document, a string, which the encoder only weighs
 * (`maxInputBytes`) and cannot see nest. Without this check an input refused with 413 as a
 * variable would run when written inline.
 */
import { type DocumentNode, visit } from 'graphql';
import { type FingerprintLimits, fingerprintLimits, inputTooDeep } from '../core/fingerprint.js';

/**
 * Refuses a document whose object or list literals nest as deep as `maxInputDepth` with
 * `IDEMPOTENCY_INPUT_TOO_LARGE` (413), the error a variable that deep gets: a literal counts
 * as the variable it could have been, one level below the variables object.
 */
export function assertLiteralDepth(
  document: DocumentNode,
  limits: Partial<FingerprintLimits> = {},
): void {
  const { maxInputDepth } = fingerprintLimits(limits);
  if (literalDepth(document) >= maxInputDepth) {
    throw inputTooDeep(maxInputDepth, 'in a literal argument');
  }
}

/**
 * Servers cache parsed documents, so a mutation sent again arrives as the same
 * `DocumentNode`: measure each once.
 */
const depths = new WeakMap<DocumentNode, number>();

/**
 * How deep object and list literals nest anywhere in the document (`f(a: {b: [1]})` is 2).
 * The whole document, as the whole document is printed into the fingerprint. `visit` keeps
 * its own stack, so a deep literal cannot overflow ours.
 */
function literalDepth(document: DocumentNode): number {
  const known = depths.get(document);
  if (known !== undefined) return known;
  let depth = 0;
  let deepest = 0;
  const nest = {
    enter() {
      depth++;
      if (depth > deepest) deepest = depth;
    },
    leave() {
      depth--;
    },
  };
  visit(document, { ObjectValue: nest, ListValue: nest });
  depths.set(document, deepest);
  return deepest;
}
