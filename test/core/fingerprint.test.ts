import { describe, expect, it } from 'vitest';
import { canonicalize, fingerprint } from '../../src/index.js';

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
