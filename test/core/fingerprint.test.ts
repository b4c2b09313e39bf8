import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FINGERPRINT_LIMITS, fingerprint, IdempotencyError } from '../../src/index.js';
import { canonicalize } from '../../src/store/index.js';

const fp = (input: unknown, operation = 'createPayment', surface = 'graphql') =>
  fingerprint({ surface, operation, input });

describe('S5: fingerprint', () => {
  it('is a SHA-256 hex digest', () => {
    expect(fp({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores object key order, at every depth', () => {
    expect(fp({ a: 1, b: { c: 2, d: [1, { e: 3, f: 4 }] } })).toBe(
      fp({ b: { d: [1, { f: 4, e: 3 }], c: 2 }, a: 1 }),
    );
  });

  it('keeps array order', () => {
    expect(fp([1, 2])).not.toBe(fp([2, 1]));
  });

  it('separates surface, operation and input', () => {
    expect(fp({ a: 1 }, 'op', 'graphql')).not.toBe(fp({ a: 1 }, 'op', 'trpc'));
    expect(fp({ a: 1 }, 'op1')).not.toBe(fp({ a: 1 }, 'op2'));
    expect(fp({ a: 1 })).not.toBe(fp({ a: 2 }));
  });

  it('tells types apart that JSON would blur', () => {
    const distinct = [
      '1',
      1,
      1n,
      true,
      'true',
      null,
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      -0,
      new Date('2026-01-01T00:00:00Z'),
      '2026-01-01T00:00:00.000Z',
      [],
      {},
      new Map(),
      new Set(),
      new Uint8Array([1]),
    ];
    const encoded = distinct.map((value) => canonicalize(value));
    expect(new Set(encoded).size).toBe(distinct.length);
  });

  it('treats an undefined property as absent (a JSON client cannot tell them apart)', () => {
    expect(fp({ a: 1, b: undefined })).toBe(fp({ a: 1 }));
  });

  it('keeps undefined array items apart from null', () => {
    expect(fp([undefined])).not.toBe(fp([null]));
  });

  it('encodes Dates by instant and invalid Dates explicitly', () => {
    expect(fp(new Date('2026-01-01T00:00:00Z'))).toBe(fp(new Date(Date.UTC(2026, 0, 1))));
    expect(canonicalize(new Date('nope'))).toBe('#date:invalid');
  });

  it('ignores the insertion order of Maps and Sets', () => {
    expect(
      fp(
        new Map([
          ['a', 1],
          ['b', 2],
        ]),
      ),
    ).toBe(
      fp(
        new Map([
          ['b', 2],
          ['a', 1],
        ]),
      ),
    );
    expect(fp(new Set([1, 2]))).toBe(fp(new Set([2, 1])));
    expect(fp(new Map([['a', 1]]))).not.toBe(fp(new Map([['a', 2]])));
  });

  it('tells an array with holes from a shorter one and from one of undefined items', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const hole = [,];
    expect(canonicalize(hole)).not.toBe(canonicalize([]));
    expect(canonicalize(hole)).not.toBe(canonicalize([undefined]));
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(fp([1, , 3])).not.toBe(fp([1, undefined, 3]));
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(fp([1, , 3])).toBe(fp([1, , 3]));
  });

  it('gives equal Maps one fingerprint whatever the insertion order, also when keys encode alike', () => {
    // Two keys that are equal objects but not the same object: only the values tell them apart.
    const entries: [object, string][] = [
      [{ id: 1 }, 'x'],
      [{ id: 1 }, 'y'],
    ];
    expect(fp(new Map(entries))).toBe(fp(new Map([...entries].reverse())));
    expect(fp(new Map(entries))).not.toBe(
      fp(
        new Map([
          [{ id: 1 }, 'x'],
          [{ id: 1 }, 'x'],
        ]),
      ),
    );
    const items = [{ id: 1 }, { id: 2 }, { id: 1 }];
    expect(fp(new Set(items))).toBe(fp(new Set([...items].reverse())));
  });

  it('refuses functions, symbols and cycles', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => fp(() => 1)).toThrow(TypeError);
    expect(() => fp({ s: Symbol('x') })).toThrow(TypeError);
    expect(() => fp(cyclic)).toThrow(/cycle/);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(() => fp({ a: shared, b: shared })).not.toThrow();
  });
});

describe('S5: values whose state is not in their own enumerable properties', () => {
  class Decimal {
    #digits: string;
    constructor(digits: string) {
      this.#digits = digits;
    }
    toJSON() {
      return this.#digits;
    }
  }
  class Opaque {
    #secret: string;
    constructor(secret: string) {
      this.#secret = secret;
    }
    get secret() {
      return this.#secret;
    }
  }

  it('encodes URL, URLSearchParams, RegExp, Error and boxed primitives by content', () => {
    const pairs: [unknown, unknown][] = [
      [new URL('https://a.example/x'), new URL('https://b.example/x')],
      [new URLSearchParams('a=1'), new URLSearchParams('a=2')],
      [/ab/g, /ab/i],
      [/ab/g, /ac/g],
      [new Error('card declined'), new Error('card expired')],
      [new TypeError('x'), new RangeError('x')],
      [Object.assign(new Error('x'), { code: 'A' }), Object.assign(new Error('x'), { code: 'B' })],
      [Object(1), Object(2)],
      [Object('a'), Object('b')],
      [Object(true), Object(false)],
      [Object(1n), Object(2n)],
      [Object(1), 1],
    ];
    for (const [a, b] of pairs) expect(fp(a)).not.toBe(fp(b));
    expect(fp(new URL('https://a.example/x'))).toBe(fp(new URL('HTTPS://A.example/x')));
    expect(fp(/ab/g)).toBe(fp(/ab/g));
  });

  it('tags binary data with its type: the same bytes as Int8Array and Uint8Array differ', () => {
    const bytes = [1, 2, 3, 4, 5, 6, 7, 8];
    const views = [
      new Int8Array(bytes),
      new Uint8Array(bytes),
      new Uint8ClampedArray(bytes),
      new Int16Array(new Uint8Array(bytes).buffer),
      new Uint16Array(new Uint8Array(bytes).buffer),
      new Int32Array(new Uint8Array(bytes).buffer),
      new Uint32Array(new Uint8Array(bytes).buffer),
      new Float32Array(new Uint8Array(bytes).buffer),
      new Float64Array(new Uint8Array(bytes).buffer),
      new BigInt64Array(new Uint8Array(bytes).buffer),
      new BigUint64Array(new Uint8Array(bytes).buffer),
      new DataView(new Uint8Array(bytes).buffer),
      Buffer.from(bytes),
      new Uint8Array(bytes).buffer,
      (() => {
        const shared = new SharedArrayBuffer(8);
        new Uint8Array(shared).set(bytes);
        return shared;
      })(),
    ];
    const prints = views.map((view) => fp(view));
    expect(new Set(prints).size).toBe(views.length);
    expect(fp(new Uint8Array([1, 2]))).not.toBe(fp(new Uint8Array([1, 3])));
    // A view is its own bytes, not the whole buffer behind it.
    const big = new Uint8Array([9, 1, 2, 9]);
    expect(fp(big.subarray(1, 3))).toBe(fp(new Uint8Array([1, 2])));
  });

  it('encodes null-prototype objects (graphql-js coerced arguments) like plain ones', () => {
    const coerced = Object.assign(Object.create(null), { amount: 5, note: 'x' });
    expect(fp(coerced)).toBe(fp({ amount: 5, note: 'x' }));
    expect(fp(Object.assign(Object.create(null), { amount: 6 }))).not.toBe(fp(coerced));
  });

  it('encodes class instances with toJSON by class name and toJSON (Decimal-like scalars)', () => {
    expect(fp(new Decimal('1.10'))).not.toBe(fp(new Decimal('1.1')));
    expect(fp(new Decimal('1.10'))).toBe(fp(new Decimal('1.10')));
    expect(fp(new Decimal('1.10'))).not.toBe(fp('1.10'));
  });

  it('refuses other class instances with a TypeError naming the class and the path, never the value', () => {
    let error: unknown;
    try {
      fp({ order: { items: [{ card: new Opaque('4242-secret') }] } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TypeError);
    const message = (error as Error).message;
    expect(message).toContain('Opaque');
    expect(message).toContain('input.order.items[0].card');
    expect(message).toMatch(/toJSON\(\)/);
    expect(message).not.toContain('4242-secret');
    expect(() => fp(new WeakMap())).toThrow(/WeakMap/);
    expect(() => fp(Promise.resolve(1))).toThrow(/Promise/);
    expect(() => fp({ upload: new Blob(['x']) })).toThrow(/Blob \(at input\.upload\)/);
    expect(() => fp(new FormData())).toThrow(/FormData/);
  });
});

describe('S5: distinct values never share a fingerprint (property)', () => {
  class Money {
    constructor(readonly cents: number) {}
    toJSON() {
      return { cents: this.cents };
    }
  }
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      tie('leaf'),
      fc.array(tie('item'), { maxLength: 3 }),
      fc.sparseArray(tie('item'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', '__proto__', ''), tie('value'), {
        maxKeys: 3,
        // Null-prototype objects encode like plain ones on purpose (tested above).
        noNullPrototype: true,
      }),
      fc.array(fc.tuple(tie('leaf'), tie('value')), { maxLength: 3 }).map((e) => new Map(e)),
      fc.array(tie('leaf'), { maxLength: 3 }).map((items) => new Set(items)),
    ),
    item: fc.oneof(tie('value'), fc.constant(undefined)),
    leaf: fc.oneof(
      fc.constantFrom(0, -0, 1, Number.NaN, Number.POSITIVE_INFINITY, null, true, false),
      fc.constantFrom('', 'a', '1', 'true', 'null'),
      fc.bigInt({ min: -2n, max: 2n }),
      fc.integer({ min: -1, max: 1 }).map((n) => new Date(n * 1000)),
      fc
        .constantFrom('https://a.example/', 'https://a.example/b', 'http://a.example/')
        .map((href) => new URL(href)),
      fc
        .constantFrom('a', 'b')
        .chain((s) => fc.constantFrom('', 'g', 'i').map((f) => new RegExp(s, f))),
      fc.constantFrom('x', 'y').map((message) => new Error(message)),
      fc.constantFrom('x', 'y').map((message) => new TypeError(message)),
      fc
        .uint8Array({ maxLength: 2 })
        .chain((bytes) =>
          fc.constantFrom(
            new Uint8Array(bytes),
            new Int8Array(bytes),
            Buffer.from(bytes),
            new DataView(new Uint8Array(bytes).buffer),
            new Uint8Array(bytes).buffer,
          ),
        ),
      fc.integer({ min: 0, max: 1 }).map((n) => Object(n)),
      fc.constantFrom('a', '1').map((s) => Object(s)),
      fc.integer({ min: 0, max: 2 }).map((n) => new Money(n)),
    ),
  }));

  it('an equal Map or Set built in another order has the same fingerprint', () => {
    // Keys and items drawn from few shapes, so that equal objects that are not the same
    // object (which encode alike) meet often. Map keys are objects: a primitive key given
    // twice keeps the last value, so reordering would build another Map.
    const object = fc.oneof(
      fc.constantFrom(0, 1).map((id) => ({ id })),
      fc.constantFrom(0, 1).map((id) => [id]),
    );
    const small = fc.oneof(fc.constantFrom(0, 1, 'a'), object);
    const reorder = <T>(items: T[]) =>
      fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length });
    fc.assert(
      fc.property(
        fc
          .array(fc.tuple(object, small), { maxLength: 6 })
          .chain((entries) => fc.tuple(fc.constant(entries), reorder(entries))),
        fc
          .array(small, { maxLength: 6 })
          .chain((items) => fc.tuple(fc.constant(items), reorder(items))),
        ([entries, shuffled], [items, reordered]) => {
          expect(fp(new Map(shuffled))).toBe(fp(new Map(entries)));
          expect(fp(new Set(reordered))).toBe(fp(new Set(items)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('two values share a fingerprint exactly when they are deeply equal', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const equal = deepStrictEqualOrUnknown(a, b);
        // No oracle for this pair: skip it rather than guess.
        fc.pre(equal !== undefined);
        expect(fp(a) === fp(b)).toBe(equal);
      }),
      { numRuns: 3000 },
    );
  });
});

/**
 * Node's `isDeepStrictEqual`, or undefined where it throws: Node 22's throws "Cannot read
 * properties of null (reading 'constructor')" comparing a Map keyed by `null` with one keyed
 * by objects (Node 20's answers).
 */
function deepStrictEqualOrUnknown(a: unknown, b: unknown): boolean | undefined {
  try {
    return isDeepStrictEqual(a, b);
  } catch {
    return undefined;
  }
}

describe('Limits: cost linear in the input as received, depth and size bounded', () => {
  /** A chain `depth` links long in which each link reaches the next on two paths. */
  function sharedChain(depth: number, onRead: () => void) {
    let node: object = { leaf: 1 };
    for (let i = 0; i < depth; i++) {
      const next = node;
      node = new Proxy(
        { l: next, r: next },
        {
          ownKeys(target) {
            onRead();
            return Reflect.ownKeys(target);
          },
        },
      );
    }
    return node;
  }

  it('encodes an object shared by 2^60 paths once per object (a Merkle tree, memoized)', () => {
    let reads = 0;
    const input = sharedChain(60, () => reads++);
    expect(fp({ input })).toMatch(/^[0-9a-f]{64}$/);
    expect(reads).toBe(60);
  });

  it('gives a shared object and an equal copy the same fingerprint', () => {
    const shared = { x: 'y'.repeat(2000) };
    expect(fp({ a: shared, b: shared })).toBe(fp({ a: { x: 'y'.repeat(2000) }, b: shared }));
  });

  it('refuses input nested deeper than maxInputDepth with IDEMPOTENCY_INPUT_TOO_LARGE (413)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = { d: deep };
    const error = (() => {
      try {
        fp(deep);
      } catch (caught) {
        return caught;
      }
    })() as IdempotencyError;
    expect(IdempotencyError.is(error)).toBe(true);
    expect(error.code).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(error.status).toBe(413);
    expect(error.message).toContain(`${FINGERPRINT_LIMITS.maxInputDepth} levels`);
    let ok: unknown = 1;
    for (let i = 0; i < FINGERPRINT_LIMITS.maxInputDepth; i++) ok = [ok];
    expect(() => fp(ok)).not.toThrow();
    expect(() => fp([ok])).toThrow(/nests deeper/);
    // A guard's options without the limits (a hand-made guard, say) still get the defaults.
    expect(() => fingerprint({ surface: 's', operation: 'o', input: deep }, {})).toThrow(
      /nests deeper than 128 levels/,
    );
  });

  it('refuses input larger than maxInputBytes, counting a shared object once', () => {
    const limits = { maxInputBytes: 10_000, maxInputDepth: 128 };
    const big = 'x'.repeat(6_000);
    expect(() => fingerprint({ surface: 's', operation: 'o', input: [big, big] }, limits)).toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_INPUT_TOO_LARGE' }),
    );
    const shared = { text: big };
    expect(() =>
      fingerprint({ surface: 's', operation: 'o', input: [shared, shared] }, limits),
    ).not.toThrow();
    expect(FINGERPRINT_LIMITS).toEqual({ maxInputBytes: 1_048_576, maxInputDepth: 128 });
  });
});
