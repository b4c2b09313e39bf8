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
  /** subject ÷ against: medians in process, requests/s over HTTP. */
  value: number;
  limit: number;
  /** 'at most' for costs (time), 'at least' for throughput. */
  bound: 'at most' | 'at least';
  met: boolean;
  /** Shown beside the value: the p99s of an HTTP goal. */
  note?: string;
  /**
   * `best`: the best any guarded call could do, measured in the same run against the same baseline:
   * the least a replay through the framework costs (its `replay-floor` case), or the most
   * throughput the cheapest designs leave over HTTP (the `design-*` servers).
   */
  best?: { subject: string; value: number; reachable: boolean };
}

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
