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
