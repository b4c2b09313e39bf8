/**
 * A ratio paired by round, and its noise interval (bench/measure.ts): docs/benchmarks.md
 * states every guarded-to-unguarded ratio with it, and a goal met or not beside it, so the
 * interval must hold the ratio and widen with the rounds' spread.
 */
import { describe, expect, it } from 'vitest';
import { pairedRatio } from '../../bench/measure.js';

/** Thirty rounds of the baseline (100 µs each) and of the subject at these ratios, cycled. */
function pairedAt(ratios: number[]) {
  const against = Array.from({ length: 30 }, () => 100);
  const subject = against.map((value, round) => value * ratios[round % ratios.length]!);
  return pairedRatio(subject, against)!;
}

describe('pairedRatio', () => {
  it('is the ratio itself when every round agrees', () => {
    expect(pairedAt([1.3])).toEqual({ value: 1.3, interval: [1.3, 1.3] });
  });

  it('is the median of the per-round ratios, inside an interval that widens with their spread', () => {
    const narrow = pairedAt([1.28, 1.3, 1.32]);
    const wide = pairedAt([1.1, 1.3, 1.5]);
    for (const { value, interval } of [narrow, wide]) {
      expect(value).toBeCloseTo(1.3);
      expect(interval[0]).toBeLessThanOrEqual(value);
      expect(interval[1]).toBeGreaterThanOrEqual(value);
    }
    const width = ({ interval }: { interval: [number, number] }) => interval[1] - interval[0];
    expect(width(wide)).toBeGreaterThan(width(narrow));
    expect(wide.interval[0]).toBeLessThan(1.25);
  });

  it('pairs rounds, so noise that slows both cases of a round cancels', () => {
    // Each round is slower or faster as a whole; the ratio within it stays 1.3.
    const against = Array.from({ length: 30 }, (_, round) => 100 * (1 + (round % 5) / 2));
    const subject = against.map((value) => value * 1.3);
    const { value, interval } = pairedRatio(subject, against)!;
    expect(value).toBeCloseTo(1.3);
    expect(interval[0]).toBeCloseTo(1.3);
    expect(interval[1]).toBeCloseTo(1.3);
  });

  it('gives the same interval for the same rounds', () => {
    expect(pairedAt([1.1, 1.25, 1.4, 1.2])).toEqual(pairedAt([1.1, 1.25, 1.4, 1.2]));
  });

  it('has none without rounds, or for cases measured in different rounds', () => {
    expect(pairedRatio(undefined, [1, 2])).toBeUndefined();
    expect(pairedRatio([], [])).toBeUndefined();
    expect(pairedRatio([1, 2, 3], [1, 2])).toBeUndefined();
  });
});
