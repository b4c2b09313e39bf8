/**
 * How stored results become text and back (SPEC S9). Any object with `stringify` and
 * `parse` fits, so `superjson` can be passed as it is.
 */
export interface Serializer {
  stringify(value: unknown): string;
  parse(text: string): unknown;
}

const TAG = '$mg';

/**
 * The default serializer: JSON, with Date, BigInt, Map, Set, `undefined` array items and
 * non-finite numbers carried as tagged objects so that a replay gives back what the first
 * call returned. A plain object that happens to use the tag property is escaped.
 *
 * Most results are plain JSON already (graphql-js results always are), and for those the
 * tagged copy is the value itself: they skip it both ways, which is most of a replay's
 * serializer cost.
 */
export const jsonSerializer: Serializer = {
  stringify: (value) =>
    (isPlainJson(value, 0) ? JSON.stringify(value) : JSON.stringify(toJsonSafe(value))) ?? 'null',
  parse: (text) => {
    const parsed = JSON.parse(text) as Json;
    return hasNoTags(text) ? parsed : fromJsonSafe(parsed);
  },
};

/** Past this depth the check gives up and the tagged copy decides (it reports cycles too). */
const PLAIN_CHECK_DEPTH = 64;

/**
 * True when `toJsonSafe(value)` would be an equal copy of `value`, so that `JSON.stringify`
 * of either gives the same text: only null, booleans, strings, finite numbers, arrays of
 * those, and plain objects (prototype `Object.prototype` or `null`) without a `toJSON` or
 * the tag property. Object properties that JSON leaves out (`undefined`, functions,
 * symbols) are left out by both; array items that JSON would turn into `null` are not plain
 * (an `undefined` item is tagged).
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= PLAIN_CHECK_DEPTH) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlainJson(item, depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || Object.hasOwn(value, TAG)) return false;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const skipped = item === undefined || typeof item === 'function' || typeof item === 'symbol';
    if (!skipped && !isPlainJson(item, depth + 1)) return false;
  }
  return true;
}

/**
 * True when no object in the JSON `text` can have the tag property, so `fromJsonSafe` would
 * return an equal copy of what `JSON.parse` built. Without the tag's characters, and without
 * a `\u` escape that could spell them, no key is the tag.
 */
function hasNoTags(text: string): boolean {
  return !text.includes(TAG) && !text.includes('\\u');
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function toJsonSafe(value: unknown): Json | undefined {
  switch (typeof value) {
    case 'bigint':
      return { [TAG]: 'BigInt', v: value.toString() };
    case 'number':
      return Number.isFinite(value) ? value : { [TAG]: 'Number', v: String(value) };
    case 'string':
    case 'boolean':
      return value;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return null;
  if (value instanceof Date) {
    return { [TAG]: 'Date', v: Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString() };
  }
  if (value instanceof Map) {
    return { [TAG]: 'Map', v: [...value].map(([k, v]) => [toItem(k), toItem(v)]) };
  }
  if (value instanceof Set) return { [TAG]: 'Set', v: [...value].map(toItem) };
  if (Array.isArray(value)) return value.map(toItem);
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return toJsonSafe(withToJson.toJSON());
  const out: { [key: string]: Json } = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const encoded = toJsonSafe(item);
    if (encoded !== undefined) define(out, key, encoded);
  }
  return Object.hasOwn(out, TAG) ? { [TAG]: 'Object', v: out } : out;
}

function toItem(value: unknown): Json {
  return value === undefined ? { [TAG]: 'undefined' } : (toJsonSafe(value) ?? null);
}

function fromJsonSafe(value: Json): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fromJsonSafe);
  const tag = value[TAG];
  if (typeof tag !== 'string' || !Object.hasOwn(value, TAG)) return objectFrom(value);
  const v = value.v as Json;
  switch (tag) {
    case 'BigInt':
      return BigInt(v as string);
    case 'Number':
      return Number(v);
    case 'Date':
      return new Date(v === 'invalid' ? Number.NaN : (v as string));
    case 'Map':
      return new Map((v as Json[][]).map(([k, item]) => [fromJsonSafe(k!), fromJsonSafe(item!)]));
    case 'Set':
      return new Set((v as Json[]).map(fromJsonSafe));
    case 'undefined':
      return undefined;
    case 'Object':
      return objectFrom(v as { [key: string]: Json });
    default:
      throw new TypeError(`Unknown serialized tag ${JSON.stringify(tag)}.`);
  }
}

function objectFrom(value: { [key: string]: Json }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) define(out, key, fromJsonSafe(item));
  return out;
}

/**
 * Sets an own, enumerable property. Plain assignment would treat a property named
 * `__proto__` (a GraphQL alias, say) as the object's prototype: it would vanish from the
 * replay, or worse, change the object's behaviour (SPEC S9). No prototype is ever touched.
 */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
