import { IdempotencyError } from './errors.js';

/** SPEC S2: a key is 1 to 255 characters of visible ASCII (0x21-0x7E). */
export const MAX_KEY_LENGTH = 255;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** Where a key came from; used in error messages only. */
export type KeySource = 'header' | 'argument' | 'input' | 'directive' | 'context' | (string & {});

export interface KeyCandidate {
  source: KeySource;
  /** The raw value; `undefined` and `null` mean "this source gave no key". */
  value: unknown;
}

/**
 * Checks a key's syntax (SPEC S2) and returns it. Throws `IDEMPOTENCY_KEY_INVALID` for
 * anything that is not a string of 1-255 visible ASCII characters.
 */
export function validateKey(value: unknown, source: KeySource = 'input'): string {
  if (typeof value !== 'string') {
    throw invalid(`The idempotency key from the ${source} must be a string.`);
  }
  if (value.length === 0 || value.length > MAX_KEY_LENGTH) {
    throw invalid(
      `The idempotency key from the ${source} must be 1 to ${MAX_KEY_LENGTH} characters long.`,
    );
  }
  if (!VISIBLE_ASCII.test(value)) {
    throw invalid(
      `The idempotency key from the ${source} may contain only visible ASCII characters (no spaces or control characters).`,
    );
  }
  return value;
}

/**
 * Reads an `Idempotency-Key` header value (SPEC S2): an RFC 8941 sf-string (`"abc"`, with
 * `\"` and `\\` escapes) or a bare value, surrounding whitespace ignored. Returns
 * `undefined` when the header is absent.
 */
export function parseKeyHeader(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (!trimmed.startsWith('"')) return validateKey(trimmed, 'header');
  return validateKey(unquoteSfString(trimmed), 'header');
}

/**
 * Picks the one key among several sources (SPEC S1). Sources that gave nothing are
 * ignored; every present source is validated; two that disagree are an error. Returns
 * `undefined` when no source gave a key (the caller decides between S3's 400 and running
 * unguarded).
 */
export function resolveKey(candidates: readonly KeyCandidate[]): string | undefined {
  let chosen: { key: string; source: KeySource } | undefined;
  for (const { source, value } of candidates) {
    if (value === undefined || value === null) continue;
    const key = source === 'header' ? parseKeyHeader(String(value)) : validateKey(value, source);
    if (key === undefined) continue;
    if (chosen && chosen.key !== key) {
      throw invalid(
        `The idempotency keys from the ${chosen.source} and the ${source} disagree; send one key, or the same key in both.`,
      );
    }
    chosen ??= { key, source };
  }
  return chosen?.key;
}

/** RFC 8941 section 4.2.5: a quoted string with only `\"` and `\\` as escapes. */
function unquoteSfString(text: string): string {
  let out = '';
  for (let i = 1; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\') {
      const next = text[i + 1];
      if (next !== '"' && next !== '\\') {
        throw invalid('The Idempotency-Key header has an invalid escape in its quoted string.');
      }
      out += next;
      i++;
    } else if (ch === '"') {
      if (i !== text.length - 1) {
        throw invalid('The Idempotency-Key header has characters after its closing quote.');
      }
      return out;
    } else {
      const code = ch.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) {
        throw invalid('The Idempotency-Key header may contain only visible ASCII characters.');
      }
      out += ch;
    }
  }
  throw invalid('The Idempotency-Key header has an unterminated quoted string.');
}

function invalid(message: string): IdempotencyError {
  return new IdempotencyError('IDEMPOTENCY_KEY_INVALID', message);
}
