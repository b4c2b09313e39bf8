import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSerializer } from '../../src/index.js';

const roundTrip = (value: unknown) => jsonSerializer.parse(jsonSerializer.stringify(value));

describe('S9: the default serializer round-trips what a mutation returns', () => {
  it('keeps Date, BigInt, Map, Set and nested values', () => {
    const value = {
      at: new Date('2026-05-06T07:08:09.010Z'),
      amount: 12345678901234567890n,
      byCurrency: new Map<string, unknown>([['EUR', { total: 5n }]]),
      tags: new Set(['a', 'b']),
      list: [1, 'two', null, undefined, { deep: new Date(0) }],
      nothing: null,
    };
    expect(roundTrip(value)).toEqual(value);
  });

  it('keeps non-finite numbers and invalid dates', () => {
    const out = roundTrip([Number.NaN, Number.POSITIVE_INFINITY, new Date('bad')]) as unknown[];
    expect(out[0]).toBeNaN();
    expect(out[1]).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN((out[2] as Date).getTime())).toBe(true);
  });

  it('drops undefined properties as JSON does', () => {
    expect(roundTrip({ a: 1, b: undefined })).toEqual({ a: 1 });
  });

  it('does not mistake a plain object using the tag property for a tagged value', () => {
    const tricky = { $mg: 'Date', v: 'not a date' };
    expect(roundTrip(tricky)).toEqual(tricky);
  });

  it('honours toJSON of other objects', () => {
    const withToJson = { toJSON: () => ({ shown: true }) };
    expect(roundTrip(withToJson)).toEqual({ shown: true });
  });
});

describe('S9: a property named __proto__ survives a replay', () => {
  it('keeps an own __proto__ property, byte for byte, and touches no prototype', () => {
    const value = JSON.parse(
      '{"data":{"__proto__":{"id":1,"polluted":true},"nested":[{"__proto__":"text"}]}}',
    );
    const text = jsonSerializer.stringify(value);
    const back = jsonSerializer.parse(text) as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(back)).toBe(JSON.stringify(value));
    expect(Object.hasOwn(back.data!, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(back.data)).toBe(Object.prototype);
    expect(
      Object.getPrototypeOf(Object.getOwnPropertyDescriptor(back.data, '__proto__')?.value),
    ).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((back.data as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('escapes a __proto__ object that uses the tag property as well', () => {
    const value = JSON.parse('{"__proto__":{"$mg":"Date","v":"x"}}');
    const back = jsonSerializer.parse(jsonSerializer.stringify(value));
    expect(JSON.stringify(back)).toBe(JSON.stringify(value));
  });
});

describe('S9: plain JSON results (the common case) are stored as JSON gives them', () => {
  it('stores any JSON value as JSON.stringify does and gives back what JSON.parse does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = jsonSerializer.stringify(value);
        expect(text).toBe(JSON.stringify(value));
        expect(jsonSerializer.parse(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('still tags what plain JSON would lose when it sits deep in an otherwise plain result', () => {
    const value = {
      data: Object.assign(Object.create(null), {
        list: [1, undefined, { at: new Date(0) }],
        deep: { amount: 5n, ratio: Number.NaN },
      }),
    };
    const back = roundTrip(value) as { data: { list: unknown[]; deep: { ratio: number } } };
    expect(back.data.list).toEqual([1, undefined, { at: new Date(0) }]);
    expect(back.data.list).toHaveLength(3);
    expect(back.data.deep).toMatchObject({ amount: 5n });
    expect(back.data.deep.ratio).toBeNaN();
  });

  it('escapes the tag property and honours toJSON at any depth', () => {
    const value = { a: [{ b: { $mg: 'Date', v: 'x' } }], c: { toJSON: () => 'shown' } };
    expect(roundTrip(value)).toEqual({ a: [{ b: { $mg: 'Date', v: 'x' } }], c: 'shown' });
  });

  it('reads a tag spelled with JSON escapes as a tag', () => {
    const stored = jsonSerializer.stringify({ at: new Date(0) }).replace('$mg', '\\u0024mg');
    expect(stored).toContain('\\u0024mg');
    expect(jsonSerializer.parse(stored)).toEqual({ at: new Date(0) });
  });

  it('reports a cycle as an error, however deep the plain part above it', () => {
    let cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (let i = 0; i < 100; i++) cyclic = { next: cyclic };
    expect(() => jsonSerializer.stringify(cyclic)).toThrow();
  });
});
