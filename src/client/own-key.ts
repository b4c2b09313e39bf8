/**
 * A key the caller set itself is the intent's key (SPEC S28): an order id that must survive
 * a reload, or the same intent sent from two sessions. Every helper sends it unchanged on
 * every attempt and never makes one of its own in its place. A key the server would refuse
 * (S2: 1 to 255 visible ASCII characters) is refused here, before anything is sent, rather
 * than replaced by a fresh one or sent only to come back 400.
 */
import { IDEMPOTENCY_KEY_HEADER } from './keys.js';

/** The code of the error thrown for such a key: the code the server would answer with. */
export const KEY_INVALID = 'IDEMPOTENCY_KEY_INVALID';

export type InvalidKeyError = TypeError & { code: typeof KEY_INVALID };

/** One place a caller may set its key: its name (for the message) and what it holds there. */
export type KeyPlace = readonly [where: string, value: unknown];

const MAX_KEY_LENGTH = 255;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** RFC 8941 sf-string: printable ASCII between quotes, `\"` and `\\` the only escapes. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The key the caller set, or undefined when it set none. `places` hold values a helper takes
 * as they are (`context.idempotencyKey`); `headerValues` are the call's `Idempotency-Key`
 * header values, read as the server reads them (surrounding whitespace dropped, an RFC 8941
 * quoted string unquoted) and sent as they were. Throws an `InvalidKeyError` for a key the
 * server would refuse, a header given twice, or two places that disagree.
 */
export function ownKey(
  places: readonly KeyPlace[],
  headerValues: readonly string[] = [],
): string | undefined {
  const header = `the ${IDEMPOTENCY_KEY_HEADER} header`;
  if (headerValues.length > 1) {
    throw invalid(`The idempotency key is set more than once in ${header}; set it once.`);
  }
  const candidates = [
    ...places.map(([where, value]) => ({ where, value, read: checked })),
    { where: header, value: headerValues[0], read: fromHeader },
  ];
  let chosen: { key: string; where: string } | undefined;
  for (const { where, value, read } of candidates) {
    if (value === undefined || value === null) continue;
    const key = read(value, where);
    if (chosen && chosen.key !== key) {
      throw invalid(
        `The idempotency keys from ${chosen.where} and ${where} disagree; set one key, or the same key in both.`,
      );
    }
    chosen ??= { key, where };
  }
  return chosen?.key;
}

function fromHeader(raw: unknown, where: string): string {
  const value = String(raw).replace(/^[ \t]+|[ \t]+$/g, '');
  if (!value.startsWith('"')) return checked(value, where);
  const quoted = SF_STRING.exec(value);
  if (!quoted) {
    throw invalid(`The idempotency key from ${where} is not a well-formed quoted string.`);
  }
  return checked(quoted[1]!.replace(/\\(["\\])/g, '$1'), where);
}

function checked(value: unknown, where: string): string {
  if (typeof value !== 'string') {
    throw invalid(`The idempotency key from ${where} must be a string.`);
  }
  if (value.length === 0 || value.length > MAX_KEY_LENGTH) {
    throw invalid(
      `The idempotency key from ${where} must be 1 to ${MAX_KEY_LENGTH} characters long.`,
    );
  }
  if (!VISIBLE_ASCII.test(value)) {
    throw invalid(
      `The idempotency key from ${where} may contain only visible ASCII characters (no spaces or control characters).`,
    );
  }
  return value;
}

/** The message never shows the key: it may be a customer's order id (SPEC S26). */
function invalid(message: string): InvalidKeyError {
  return Object.assign(new TypeError(`mutation-guard/client: ${message} Nothing was sent.`), {
    code: KEY_INVALID,
  } as const);
}
