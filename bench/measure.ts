/**
 * In-process timing: every case of a group runs in the same rounds, one time-boxed batch per
 * case per round, so a burst of noise from the shared machine (another test suite, GC, the
 * database's checkpointer) lands on guarded and unguarded cases alike instead of on
 * whichever happened to run during it.
 *
 * No forced GC between rounds. The runtime collects garbage as each case makes it, as it does
 * in a server. A forced full GC (`gc()` under `--expose-gc`, as this bench did until
 * 2026-12-03) leaves the process slower for about half a second after it: the unguarded tRPC
 * mutation on SQLite took about 210 µs per call in the 250 ms after one, 107 µs once settled.
 * With a GC before every round, every in-process case was timed mostly in that state (the
 * unguarded GraphQL mutation on SQLite: 482 µs median, against 174 µs without), and the
 * ratios moved with how much each case allocates, not with what it costs a server.
 */
import { performance } from 'node:perf_hooks';

/** One operation to time; each call is one sample. */
export interface TimedCase {
  id: string;
  run: () => Promise<unknown>;
}

export interface GroupOptions {
  /** Rounds of the whole group; each case gets one batch per round. */
  rounds: number;
  /** How long one batch of one case runs, in milliseconds. */
  batchMs: number;
  /** Untimed calls per case before the first round (JIT, connection pools, prepared plans). */
  warmup: number;
}

export interface Stats {
  /** Microseconds per call. */
  median: number;
  p99: number;
  mean: number;
  samples: number;
}

/** A case's statistics in a group, with the median of each round's batch, round by round. */
export interface GroupStats extends Stats {
  rounds: number[];
}

/** Runs the group and returns each case's statistics, keyed by id. */
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
    // Rotate the order each round so no case always runs first (cold caches) or last.
    for (let i = 0; i < cases.length; i++) {
      const item = cases[(i + round) % cases.length]!;
      const times = await batch(item, options.batchMs);
      samples.get(item.id)!.push(...times);
      rounds.get(item.id)!.push(summarize(times).median);
    }
  }
  return new Map(
    [...samples].map(([id, values]) => [id, { ...summarize(values), rounds: rounds.get(id)! }]),
  );
}

async function batch(item: TimedCase, batchMs: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + batchMs;
  // At least a few calls, so that a slow case still gets samples in every round.
  for (let calls = 0; calls < 3 || performance.now() < end; calls++) {
    const start = process.hrtime.bigint();
    await item.run();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return times;
}

/** Median, p99 (nearest rank) and mean of microsecond samples. */
export function summarize(values: number[]): Stats {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    median: nearestRank(sorted, 0.5),
    p99: nearestRank(sorted, 0.99),
    mean: sum / Math.max(1, sorted.length),
    samples: sorted.length,
  };
}

/** The value at quantile `q` (0 < q ≤ 1) of sorted values, by nearest rank. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
