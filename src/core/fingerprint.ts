import { sha256 } from './hash.js';

/** What a request asks for (SPEC S5). The key itself is never part of it. */
export interface FingerprintInput {
  /** Which adapter saw the request: the same key on GraphQL and tRPC never matches. */
  surface: 'graphql' | 'trpc' | (string & {});
  /** GraphQL: the printed operation document without the key, plus its name. tRPC: the path. */
  operation: string;
  /** GraphQL: coerced variables and literal arguments. tRPC: the validated input. */
  input: unknown;
}

/** SHA-256 (hex) of the canonical encoding of surface, operation and input (SPEC S5). */
export function fingerprint({ surface, operation, input }: FingerprintInput): string {
  return sha256(canonicalize([surface, operation, input]));
}

/**
 * A deterministic text encoding of a value: object keys sorted, and every type JSON would
 * blur given a tag of its own, so that two inputs share an encoding only when they are the
 * same request.
 *
 * - an object property whose value is `undefined` is left out: over JSON a client cannot
 *   tell it from an absent one, so a retry must not be told it changed;
 * - `undefined` elsewhere (array items, the top level) is encoded as a tag, not as `null`;
 * - Dates (invalid ones too), BigInts, non-finite numbers and -0 get tags;
 * - Maps are encoded as their entries sorted by encoded key, Sets as their sorted items;
 * - typed arrays and Buffers as their bytes;
 * - functions, symbols and cycles are refused: they are not request data.
 */
export function canonicalize(value: unknown): string {
  return encode(value, new Set());
}

function encode(value: unknown, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (Number.isNaN(value)) return '#NaN';
      if (!Number.isFinite(value)) return value > 0 ? '#Infinity' : '#-Infinity';
      if (Object.is(value, -0)) return '#-0';
      return JSON.stringify(value);
    case 'bigint':
      return `#bigint:${value.toString()}`;
    case 'undefined':
      return '#undefined';
    case 'function':
    case 'symbol':
      throw new TypeError(`Cannot fingerprint a ${typeof value}.`);
  }
  if (value === null) return 'null';
  const object = value as object;
  if (seen.has(object)) throw new TypeError('Cannot fingerprint a value that contains a cycle.');
  seen.add(object);
  try {
    return encodeObject(object, seen);
  } finally {
    seen.delete(object);
  }
}

function encodeObject(object: object, seen: Set<object>): string {
  if (object instanceof Date) {
    const time = object.getTime();
    return Number.isNaN(time) ? '#date:invalid' : `#date:${object.toISOString()}`;
  }
  if (Array.isArray(object)) return `[${object.map((item) => encode(item, seen)).join(',')}]`;
  if (ArrayBuffer.isView(object)) {
    const bytes = new Uint8Array(object.buffer, object.byteOffset, object.byteLength);
    return `#bytes:${Buffer.from(bytes).toString('base64')}`;
  }
  if (object instanceof Map) {
    const entries = [...object].map(([k, v]) => [encode(k, seen), encode(v, seen)] as const);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `#map{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`;
  }
  if (object instanceof Set) {
    const items = [...object].map((item) => encode(item, seen)).sort();
    return `#set[${items.join(',')}]`;
  }
  const keys = Object.keys(object).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const item = (object as Record<string, unknown>)[key];
    if (item === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${encode(item, seen)}`);
  }
  return `{${parts.join(',')}}`;
}
