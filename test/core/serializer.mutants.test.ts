/**
 * The default serializer to the letter (SPEC S9): what a mutation returns comes back from a
 * replay as it was, whether it sits alone, beside plain data or inside it. Each case here is
 * one a bug planted by `npm run mutate` got past serializer.test.ts (which mostly puts a Date
 * first, and so never reaches the plain-JSON fast path with the others).
 */
import { describe, expect, it } from 'vitest';
import { jsonSerializer } from '../../src/index.js';

const roundTrip = (value: unknown) => jsonSerializer.parse(jsonSerializer.stringify(value));

describe('S9: every kept type survives wherever it sits', () => {
  const special: [string, unknown][] = [
    ['a BigInt', 12345678901234567890n],
    ['a Map', new Map([['EUR', 5]])],
    ['a Set', new Set(['a'])],
    ['a Date', new Date('2026-05-06T07:08:09.010Z')],
    ['NaN', Number.NaN],
    ['-Infinity', Number.NEGATIVE_INFINITY],
  ];
  for (const [name, value] of special) {
    it(`keeps ${name} alone, in a plain object and in an array`, () => {
      expect(roundTrip(value)).toEqual(value);
      expect(roundTrip({ n: 1, value })).toEqual({ n: 1, value });
      expect(roundTrip([1, value])).toEqual([1, value]);
    });
  }

  it('keeps an undefined array item, and a plain object using the tag property, beside plain data', () => {
    expect(roundTrip([1, undefined])).toEqual([1, undefined]);
    expect((roundTrip([1, undefined]) as unknown[]).length).toBe(2);
    expect(roundTrip({ n: 1, $mg: 'Date' })).toEqual({ n: 1, $mg: 'Date' });
  });

  it('keeps what an own toJSON returns, tagged types included', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(roundTrip({ toJSON: () => at })).toEqual(at);
    expect(roundTrip({ n: 1, inner: { toJSON: () => new Map([[1, 2]]) } })).toEqual({
      n: 1,
      inner: new Map([[1, 2]]),
    });
  });

  it('drops undefined, function and symbol properties, also beside tagged values', () => {
    const value = { at: new Date(0), u: undefined, f: () => 1, s: Symbol('s'), n: 1 };
    expect(roundTrip(value)).toEqual({ at: new Date(0), n: 1 });
    expect(Object.keys(roundTrip(value) as object).sort()).toEqual(['at', 'n']);
  });

  it('stores a mutation that returns nothing as null', () => {
    expect(jsonSerializer.stringify(undefined)).toBe('null');
    expect(roundTrip(undefined)).toBeNull();
  });

  it('gives back plain objects whose properties the app may change', () => {
    const replayed = roundTrip({ at: new Date(0), n: 1 }) as Record<string, unknown>;
    replayed.n = 2;
    delete replayed.at;
    expect(replayed).toEqual({ n: 2 });
  });

  it('refuses a stored text with a tag it does not know', () => {
    expect(() => jsonSerializer.parse('{"$mg":"Nope","v":1}')).toThrow(TypeError);
  });
});
