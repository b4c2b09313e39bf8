/**
 * In-process timing: every case of a group runs in the same rounds, one time-boxed batch per
 * case per round, in an order that rotates each round, so that a burst of noise from the
 * shared machine lands on guarded and unguarded cases alike. No forced GC: a forced full GC
 * leaves the process about twice as slow for half a second after it (the runs before
 * 2026-12-03, which forced one before every round, timed mostly that state).
 *
 * A ratio of two cases is paired by round (`pairedRatio`): the median of the per-round ratios
 * of their batch medians, so that noise that slows a whole round lands on both sides; its
 * interval is the middle 95% of the same median over the rounds drawn again with replacement
 * (a bootstrap from a fixed seed): how far the machine's noise moves it.
 */
import { performance } from 'node:perf_hooks';
import { mulberry32 } from './random.js';

/** One operation to time; each call is one sample. */
export interface TimedCase {
  id: string;
  run: () => Promise<unknown>;
}

export interface GroupOptions {
  rounds: number;
  /** How long one batch of one case runs, in milliseconds. */
  batchMs: number;
  /** Untimed calls per case before the first round (JIT, connection pools, prepared plans). */
  warmup: number;
}

/** Microseconds per call, and each round's batch median. */
export interface GroupStats {
  median: number;
  p99: number;
  samples: number;
  rounds: number[];
}

export async function measureGroup(
  cases: readonly TimedCase[],
  options: GroupOptions,
): Promise<Map<string, GroupStats>> {
  for (const item of cases) {
    for (let i = 0; i < options.warmup; i++) await item.run();
  }
  const samples = new Map<string, number[]>(cases.map((item) => [item.id, []]));
  const rounds = new Map<string, number[]>(cases.map((item) => [item.id, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const item = cases[(i + round) % cases.length]!;
      const times: number[] = [];
      const end = performance.now() + options.batchMs;
      // At least a few calls, so that a slow case still gets samples in every round.
      while (times.length < 3 || performance.now() < end) {
        const start = process.hrtime.bigint();
        await item.run();
        times.push(Number(process.hrtime.bigint() - start) / 1000);
      }
      samples.get(item.id)!.push(...times);
      rounds.get(item.id)!.push(summarize(times).median);
    }
  }
  return new Map(
    [...samples].map(([id, values]) => [id, { ...summarize(values), rounds: rounds.get(id)! }]),
  );
}

/** Median and p99 (nearest rank) of samples. */
export function summarize(values: number[]) {
  const sorted = Float64Array.from(values).sort();
  return {
    median: nearestRank(sorted, 0.5),
    p99: nearestRank(sorted, 0.99),
    samples: sorted.length,
  };
}

/** The value at quantile `q` (0 < q ≤ 1) of sorted values, by nearest rank. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface PairedRatio {
  value: number;
  interval: [number, number];
}

/** `subject ÷ against` from their per-round medians; undefined unless they ran in the same rounds. */
export function pairedRatio(
  subject: readonly number[] | undefined,
  against: readonly number[] | undefined,
): PairedRatio | undefined {
  if (!subject?.length || subject.length !== against?.length) return undefined;
  const ratios = Float64Array.from(subject, (value, round) => value / against[round]!);
  const random = mulberry32(0x5eed);
  // 2000 resamples: enough for stable 2.5% and 97.5% points.
  const medians = Float64Array.from({ length: 2000 }, () =>
    median(Float64Array.from(ratios, () => ratios[Math.floor(random() * ratios.length)]!)),
  ).sort();
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
