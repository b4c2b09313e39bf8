/** The shape of bench/results/latest.json, shared by the runner, the goals and the reports. */
import type { DesignResult } from './designs.js';
import type { LoadVariant } from './load.js';

export interface CaseResult {
  /** `<db>.<group>.<case>`, e.g. `sqlite.graphql.fresh`. */
  id: string;
  db: 'sqlite' | 'postgres';
  /** Microseconds per call. */
  median: number;
  p99: number;
  samples: number;
  /**
   * The median of each round's batch, in µs, round by round: the goal checks pair them with
   * their baseline's to say how far a ratio moves with the machine's noise (interval.ts).
   */
  rounds?: number[];
  /** The case this one is compared with, and median ÷ its median. */
  baseline?: string;
  ratio?: number;
}

export interface HttpCaseResult {
  id: string;
  processes: number;
  variant: LoadVariant;
  requestsPerSecond: number;
  medianMs: number;
  p99Ms: number;
  responses: number;
  statuses: Record<string, number>;
  errors: number;
  /** The unguarded run with the same processes, and our requests/s ÷ its (< 1 = slower). */
  baseline?: string;
  ratio?: number;
}

export interface GoalCheck {
  goal: string;
  /** The case measured, and what it is compared with. */
  subject: string;
  against: string;
  /**
   * subject ÷ against. In process, the median of the per-round ratios where the run kept each
   * round's medians (interval.ts), else of the cases' medians; requests/s over HTTP.
   */
  value: number;
  /** In process, where the run kept each round's medians: `value`'s 95% interval (interval.ts). */
  interval?: Interval;
  limit: number;
  /** 'at most' for costs (time), 'at least' for throughput. */
  bound: 'at most' | 'at least';
  met: boolean;
  /** Shown beside the value: the p99s of an HTTP goal. */
  note?: string;
  /**
   * `best`: the best any guarded call could do, measured in the same run against the same
   * baseline (bench/goals.ts says which case for which goal). `reachable` is false only when
   * its whole interval, where it has one, is past the limit.
   */
  best?: { subject: string; value: number; interval?: Interval; reachable: boolean };
}

/** A ratio's 95% interval: [low, high]. */
export type Interval = [number, number];

export interface BenchReport {
  generatedAt: string;
  command: string;
  quick: boolean;
  seconds: number;
  machine: Record<string, string | number>;
  versions: Record<string, string>;
  settings: Record<string, number | string>;
  cases: CaseResult[];
  http: HttpCaseResult[];
  goals: GoalCheck[];
  /** The floor of each design (bench/designs.ts): what no client code can go below. */
  designs: DesignResult[];
}
