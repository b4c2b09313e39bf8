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
