/**
 * The fingerprint's promises to the letter (SPEC S5): two different inputs never share an
 * encoding, the same input always has one, and the size bound counts every byte it reads.
 * Each case here is one a bug planted by `npm run mutate` got past fingerprint.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/fingerprint.js';
import { fingerprint } from '../../src/index.js';

const of = (input: unknown, limits?: { maxInputBytes?: number; maxInputDepth?: number }) =>
  fingerprint({ surface: 'trpc', operation: 'pay', input }, limits);

/** The error code a fingerprint is refused with, or 'fingerprinted'. */
function refusal(input: unknown, limits: { maxInputBytes?: number }): string {
  try {
    of(input, limits);
    return 'fingerprinted';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('S5: different inputs never share an encoding', () => {
  it('tells apart NaN, Infinity, -Infinity, -0, 0 and null, alone and in arrays', () => {
    const values = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, null];
    const prints = values.flatMap((value) => [of(value), of([value]), of({ a: value })]);
    expect(new Set(prints).size).toBe(prints.length);
  });

  it('tells an array with true, false or null from an empty one', () => {
    const prints = [[], [true], [false], [null], [undefined]].map((value) => of(value));
    expect(new Set(prints).size).toBe(prints.length);
  });

  it('tells [1, 2] from [12], and Set {1, 2} from Set {12}', () => {
    expect(of([1, 2])).not.toBe(of([12]));
    expect(of(new Set([1, 2]))).not.toBe(of(new Set([12])));
  });

  it('tells apart Maps with other entries, Sets with other items, and binary data with other bytes', () => {
    expect(of(new Map([['a', 1]]))).not.toBe(of(new Map([['a', 2]])));
    expect(of(new Map([['a', 1]]))).not.toBe(of(new Map([['b', 1]])));
    expect(of(new Set(['a']))).not.toBe(of(new Set(['b'])));
    expect(of(new Uint8Array([1]))).not.toBe(of(new Uint8Array([2])));
  });

  it('tells apart two large objects (encodings over 1 KB enter their parent as a hash)', () => {
    const large = (note: string) => ({ items: Array.from({ length: 200 }, (_, i) => i), note });
    expect(of({ order: large('a') })).not.toBe(of({ order: large('b') }));
    expect(of([large('a')])).not.toBe(of([large('b')]));
  });
});

describe('S5: the same input always has the same encoding', () => {
  it('encodes a Map by its entries whatever their order, also with many of them', () => {
    const entries = Array.from({ length: 12 }, (_, i) => [`k${(i * 7) % 12}`, i] as const);
    const shuffled = [...entries].reverse();
    expect(of(new Map(entries))).toBe(of(new Map(shuffled)));
    expect(
      of(
        new Map([
          ['b', 1],
          ['a', 2],
        ]),
      ),
    ).toBe(
      of(
        new Map([
          ['a', 2],
          ['b', 1],
        ]),
      ),
    );
  });

  it('keeps a small input readable, and a large one as a hash', () => {
    expect(canonicalize({ b: [1, 'x'], a: null })).toBe('{"a":null,"b":[1,"x"]}');
    const text = canonicalize({ big: 'y'.repeat(2_000) });
    expect(text).toMatch(/^\{"big":"y+"\}$/);
    expect(canonicalize({ nested: { big: 'y'.repeat(2_000) } })).toMatch(
      /^\{"nested":#sha256:[0-9a-f]{64}\}$/,
    );
  });
});

describe('S5: maxInputBytes counts every value it reads', () => {
  it('accepts a request of exactly maxInputBytes and refuses one byte more', () => {
    // surface "trpc" (6), operation "pay" (5) and input "" (2): 13 bytes.
    expect(refusal('', { maxInputBytes: 13 })).toBe('fingerprinted');
    expect(refusal('x', { maxInputBytes: 13 })).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
  });

  it('counts a string each time it occurs, and empty strings too', () => {
    const limits = { maxInputBytes: 100_000 };
    expect(refusal(Array(200).fill('y'.repeat(1_000)), limits)).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(refusal(Array(60_000).fill(''), limits)).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
  });

  it('counts booleans, numbers, nulls, undefined items, bigints, empty containers and bytes', () => {
    const limits = { maxInputBytes: 50_000 };
    for (const item of [true, 1, null, undefined, 10n]) {
      expect(refusal(Array(20_000).fill(item), limits), String(item)).toBe(
        'IDEMPOTENCY_INPUT_TOO_LARGE',
      );
    }
    // Distinct empty objects and arrays (one reached on many paths counts once).
    expect(
      refusal(
        Array.from({ length: 30_000 }, () => ({})),
        limits,
      ),
    ).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(
      refusal(
        Array.from({ length: 30_000 }, () => []),
        limits,
      ),
    ).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(refusal(new Uint8Array(60_000), limits)).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
  });
});
