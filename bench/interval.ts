/**
 * The ratio of two cases of a group, round by round, and how far it moves with the machine's
 * noise. The cases of a group run in the same rounds (measure.ts), so each round gives one
 * ratio of the two batches' medians, and a burst of noise that slows a whole round lands on
 * both sides of it alike. The ratio is the median of those per-round ratios; its interval is
 * the middle 95% of the same median over rounds drawn again with replacement (a bootstrap):
 * where it straddles a goal's limit, one more run could fall on either side.
 *
 * The draws come from a fixed seed, so the same rounds always give the same interval.
 */
import { nearestRank } from './measure.js';
import { mulberry32 } from './random.js';
import type { Interval } from './results.js';

/** Resamples per interval: enough for stable 2.5% and 97.5% points. */
const RESAMPLES = 2000;
const SEED = 0x5eed;

/** A ratio of two cases paired by round, and its interval. */
export interface PairedRatio {
  value: number;
  interval: Interval;
}

/**
 * `subject ÷ against` from their per-round medians, or `undefined` when either has none or
 * they ran in different rounds.
 */
export function pairedRatio(
  subject: readonly number[] | undefined,
  against: readonly number[] | undefined,
): PairedRatio | undefined {
  if (!subject || !against || subject.length === 0 || subject.length !== against.length) {
    return undefined;
  }
  const ratios = Float64Array.from(subject, (value, round) => value / against[round]!);
  const random = mulberry32(SEED);
  const medians = new Float64Array(RESAMPLES);
  const drawn = new Float64Array(ratios.length);
  for (let resample = 0; resample < RESAMPLES; resample++) {
    for (let i = 0; i < ratios.length; i++) {
      drawn[i] = ratios[Math.floor(random() * ratios.length)]!;
    }
    medians[resample] = median(drawn);
  }
  medians.sort();
  return {
    value: median(ratios),
    interval: [nearestRank(medians, 0.025), nearestRank(medians, 0.975)],
  };
}

function median(values: Float64Array): number {
  const sorted = values.slice().sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
