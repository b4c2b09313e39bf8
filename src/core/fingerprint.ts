import { IdempotencyError } from './errors.js';
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

/**
 * Bounds on what the guard fingerprints, checked while encoding and before any claim: a
 * request over either is refused with `IDEMPOTENCY_INPUT_TOO_LARGE` (413).
 */
export interface FingerprintLimits {
  /**
   * The most bytes of request data (operation text, strings, numbers, keys, binary
   * contents) fingerprinted per request. An object reached on several paths counts once.
   */
  maxInputBytes: number;
  /** How deep objects and arrays may nest in the input. */
  maxInputDepth: number;
}

export const FINGERPRINT_LIMITS: FingerprintLimits = {
  maxInputBytes: 1024 * 1024,
  maxInputDepth: 128,
};

/**
 * SHA-256 (hex) of the canonical encoding of surface, operation and input (SPEC S5). Pass
 * the guard's options (`guard.options`) as `limits` to apply its `maxInputBytes` and
 * `maxInputDepth`; a limit not given is the default. Over either, it throws
 * `IDEMPOTENCY_INPUT_TOO_LARGE` (413): call it before `guard.run` and nothing is claimed.
 */
export function fingerprint(
  { surface, operation, input }: FingerprintInput,
  limits: Partial<FingerprintLimits> = FINGERPRINT_LIMITS,
): string {
  const encoder = new Encoder(fingerprintLimits(limits));
  const parts = [surface, operation, input].map((part) => encoder.reference(part, 0));
  return sha256(`[${parts.join(',')}]`);
}

/**
 * A deterministic text encoding of a value: object keys sorted, and every type JSON would
 * blur given a tag of its own, so that two inputs share an encoding only when they are the
 * same request (SPEC S5).
 *
 * - an object property whose value is `undefined` is left out: over JSON a client cannot
 *   tell it from an absent one, so a retry must not be told it changed;
 * - `undefined` elsewhere (array items, the top level) is encoded as a tag, not as `null`,
 *   and an array's holes get a tag of their own, apart from `undefined`;
 * - Dates (invalid ones too), BigInts, non-finite numbers and -0 get tags;
 * - Maps are encoded as their entries sorted by encoded key, then encoded value, Sets as
 *   their sorted items, so that insertion order never counts;
 * - values whose state is not in their own enumerable properties are encoded by type and
 *   content: URL and URLSearchParams by their text, RegExp by source and flags, Errors by
 *   name, message and own properties, boxed primitives by their value, Buffers, every typed
 *   array, DataView, ArrayBuffer and SharedArrayBuffer by their type's name and bytes;
 * - plain objects (prototype `Object.prototype` or `null`, as graphql-js makes them) by
 *   their own enumerable properties; instances of other classes by class name and their
 *   `toJSON()` (Decimal-like scalars), and refused with a `TypeError` naming the class and
 *   the path when they have none;
 * - functions, symbols and cycles are refused: they are not request data.
 *
 * An object or array whose encoding is longer than `INLINE_LIMIT` appears in its parent as
 * the SHA-256 of that encoding (a Merkle tree), and each object's encoding is computed once
 * per call. An object shared by many paths (superjson's referential equalities can make a
 * 1.5 KB body reach one object 2^20 ways) therefore costs once, and the work is linear in
 * the distinct objects of the input, not in the paths through them. Hashing only long
 * encodings keeps small inputs readable, and which nodes are hashed depends on content
 * alone, so a shared object and an equal copy still encode the same.
 */
export function canonicalize(
  value: unknown,
  limits: Partial<FingerprintLimits> = FINGERPRINT_LIMITS,
): string {
  return new Encoder(fingerprintLimits(limits)).full(value, 0);
}

/**
 * The 413 for an input nested deeper than `maxInputDepth`; `where` says where (keys only, never
 * values). Adapters that bound what the encoder does not see (GraphQL's literal arguments)
 * refuse with the same error.
 */
export function inputTooDeep(maxInputDepth: number, where: string): IdempotencyError {
  return new IdempotencyError(
    'IDEMPOTENCY_INPUT_TOO_LARGE',
    `The request's input nests deeper than ${maxInputDepth} levels (${where}), the limit for idempotent requests.`,
  );
}

/** The limits given, a limit not given being the default. */
export function fingerprintLimits(limits: Partial<FingerprintLimits>): FingerprintLimits {
  return {
    maxInputBytes: limits.maxInputBytes ?? FINGERPRINT_LIMITS.maxInputBytes,
    maxInputDepth: limits.maxInputDepth ?? FINGERPRINT_LIMITS.maxInputDepth,
  };
}

/** Encodings longer than this appear in their parent as a hash (see `canonicalize`). */
const INLINE_LIMIT = 1024;

/** Where in the input an encoder is, for error messages: keys only, never values. */
type PathSegment = string | number;

class Encoder {
  /** Each finished object's encoding as its parents see it: the text, or its hash. */
  private readonly done = new Map<object, string>();
  /** Objects being encoded right now: meeting one again is a cycle. */
  private readonly open = new Set<object>();
  private readonly path: PathSegment[] = [];
  private bytes = 0;

  constructor(private readonly limits: FingerprintLimits) {}

  /** The value as its parent includes it: objects by (memoized) text or hash. */
  reference(value: unknown, depth: number): string {
    if (typeof value !== 'object' || value === null) return this.primitive(value);
    const known = this.done.get(value);
    if (known !== undefined) return known;
    const text = this.full(value, depth);
    const ref = text.length > INLINE_LIMIT ? `#sha256:${sha256(text)}` : text;
    this.done.set(value, ref);
    return ref;
  }

  /** The value's own encoding, in full. */
  full(value: unknown, depth: number): string {
    if (typeof value !== 'object' || value === null) return this.primitive(value);
    if (this.open.has(value)) {
      throw new TypeError(`Cannot fingerprint a value that contains a cycle (at ${this.where()}).`);
    }
    if (depth >= this.limits.maxInputDepth) {
      throw inputTooDeep(this.limits.maxInputDepth, `at ${this.where()}`);
    }
    this.open.add(value);
    try {
      return this.object(value, depth + 1);
    } finally {
      this.open.delete(value);
    }
  }

  private primitive(value: unknown): string {
    switch (typeof value) {
      case 'string': {
        this.count(Buffer.byteLength(value, 'utf8') + 2);
        return JSON.stringify(value);
      }
      case 'boolean':
        this.count(5);
        return value ? 'true' : 'false';
      case 'number':
        this.count(24);
        if (Number.isNaN(value)) return '#NaN';
        if (!Number.isFinite(value)) return value > 0 ? '#Infinity' : '#-Infinity';
        if (Object.is(value, -0)) return '#-0';
        return JSON.stringify(value);
      case 'bigint': {
        const text = `#bigint:${value.toString()}`;
        this.count(text.length);
        return text;
      }
      case 'undefined':
        this.count(10);
        return '#undefined';
      case 'object':
        this.count(4);
        return 'null';
      default:
        throw new TypeError(`Cannot fingerprint a ${typeof value} (at ${this.where()}).`);
    }
  }

  private object(object: object, depth: number): string {
    this.count(2);
    if (Array.isArray(object)) return this.items(object, depth);
    const proto = Object.getPrototypeOf(object);
    if (proto === Object.prototype || proto === null) return this.properties(object, depth);
    if (object instanceof Date) {
      const time = object.getTime();
      return Number.isNaN(time) ? '#date:invalid' : `#date:${object.toISOString()}`;
    }
    if (object instanceof ArrayBuffer || isSharedArrayBuffer(object)) {
      return this.bytesOf(tagOf(object), new Uint8Array(object as ArrayBufferLike));
    }
    if (ArrayBuffer.isView(object)) {
      const bytes = new Uint8Array(object.buffer, object.byteOffset, object.byteLength);
      return this.bytesOf(Buffer.isBuffer(object) ? 'Buffer' : tagOf(object), bytes);
    }
    if (object instanceof Map) {
      const entries = [...object].map(
        ([k, v]) =>
          [this.child('<map key>', k, depth), this.child('<map value>', v, depth)] as const,
      );
      // By key, then by value: two keys that encode alike (equal objects that are not the
      // same object) must not leave the order to insertion, or equal Maps would differ.
      entries.sort(([keyA, valueA], [keyB, valueB]) => order(keyA, keyB) || order(valueA, valueB));
      return `#map{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`;
    }
    if (object instanceof Set) {
      const items = [...object].map((item) => this.child('<set item>', item, depth)).sort();
      return `#set[${items.join(',')}]`;
    }
    if (object instanceof URL) return this.text('URL', object.href);
    if (object instanceof URLSearchParams) return this.text('URLSearchParams', object.toString());
    if (object instanceof RegExp) return this.text('RegExp', `/${object.source}/${object.flags}`);
    if (object instanceof Error) {
      const name = this.primitive(String(object.name));
      const message = this.primitive(String(object.message));
      return `#error:${name}:${message}:${this.properties(object, depth)}`;
    }
    const boxed = boxedPrimitive(object);
    if (boxed) return `#boxed:${boxed.type}:${this.child('<value>', boxed.value, depth)}`;
    const name = className(object);
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      return `#instance:${JSON.stringify(name)}:${this.child('<toJSON>', toJSON.call(object), depth)}`;
    }
    throw new TypeError(
      `Cannot fingerprint an instance of ${name} (at ${this.where()}): its state is not in its own enumerable properties, so two different values could look the same (SPEC S5). Give the class a toJSON() method, or turn the value into plain data (a string, a plain object) before the guard sees it.`,
    );
  }

  /**
   * An array's items in order. A hole is not `undefined` (`[,]` and `[undefined]` are
   * different values, and `[,]` is not `[]`), so it gets a tag of its own; counting it keeps a
   * huge sparse array as cheap to refuse as a long dense one.
   */
  private items(array: readonly unknown[], depth: number): string {
    const parts: string[] = [];
    for (let i = 0; i < array.length; i++) {
      if (i in array) {
        parts.push(this.child(i, array[i], depth));
      } else {
        this.count(5);
        parts.push('#hole');
      }
    }
    return `[${parts.join(',')}]`;
  }

  /** Own enumerable string-keyed properties, sorted; `undefined` ones left out. */
  private properties(object: object, depth: number): string {
    const keys = Object.keys(object).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const item = (object as Record<string, unknown>)[key];
      if (item === undefined) continue;
      parts.push(`${this.primitive(key)}:${this.child(key, item, depth)}`);
    }
    return `{${parts.join(',')}}`;
  }

  private child(segment: PathSegment, value: unknown, depth: number): string {
    this.path.push(segment);
    try {
      return this.reference(value, depth);
    } finally {
      this.path.pop();
    }
  }

  private text(type: string, text: string): string {
    return `#${type}:${this.primitive(text)}`;
  }

  private bytesOf(type: string, bytes: Uint8Array): string {
    this.count(bytes.byteLength);
    return `#bytes:${type}:${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
  }

  /** Adds to the request's size, refusing it as soon as it passes the limit. */
  private count(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.maxInputBytes) {
      throw new IdempotencyError(
        'IDEMPOTENCY_INPUT_TOO_LARGE',
        `The request is larger than ${this.limits.maxInputBytes} bytes, the limit for idempotent requests.`,
      );
    }
  }

  /** The current path, as `input.items[2].note`, cut short if long. Keys only, no values. */
  private where(): string {
    let text = 'input';
    for (const segment of this.path) {
      if (typeof segment === 'number') text += `[${segment}]`;
      else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += `.${segment}`;
      else if (segment.startsWith('<')) text += ` ${segment}`;
      else text += `[${JSON.stringify(segment)}]`;
    }
    return text.length > 200 ? `${text.slice(0, 100)}...${text.slice(-97)}` : text;
  }
}

/** Code-unit order, the order `Array.prototype.sort` gives strings by default. */
function order(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The built-in type name (`Int8Array`, `DataView`...), which subclasses cannot disguise. */
function tagOf(object: object): string {
  return Object.prototype.toString.call(object).slice(8, -1);
}

function isSharedArrayBuffer(object: object): boolean {
  return typeof SharedArrayBuffer === 'function' && object instanceof SharedArrayBuffer;
}

function boxedPrimitive(object: object): { type: string; value: unknown } | undefined {
  if (object instanceof Number) return { type: 'Number', value: object.valueOf() };
  if (object instanceof String) return { type: 'String', value: object.valueOf() };
  if (object instanceof Boolean) return { type: 'Boolean', value: object.valueOf() };
  if (object instanceof BigInt) return { type: 'BigInt', value: object.valueOf() };
  return undefined;
}

function className(object: object): string {
  const ctor = (object as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor?.name === 'string' && ctor.name ? ctor.name : tagOf(object);
  return name.slice(0, 100);
}
