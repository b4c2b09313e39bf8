/** The shape of bench/results/latest.json, shared by the runner and the report. */
import type { CountRow } from './counts.js';

export interface CaseResult {
  /** `<db>.<surface>.<case>`, e.g. `sqlite.graphql.fresh`. */
  id: string;
  db: 'sqlite' | 'postgres';
  /** Microseconds per call. */
  median: number;
  p99: number;
  samples: number;
  /** Each round's batch median, µs: ratios are paired by round (measure.ts). */
  rounds: number[];
}

/** Where and with what a part of the report was measured. */
export interface RunInfo {
  generatedAt: string;
  command: string;
  seconds: number;
  machine: Record<string, string | number>;
  versions: Record<string, string>;
}

export interface BenchReport {
  /** Timed: they move with the machine. */
  timed: RunInfo & {
    settings: { rounds: number; batchMs: number; warmup: number };
    cases: CaseResult[];
  };
  /** Counted (count.ts): they do not. `npm run bench -- --counts` renews only these. */
  counted: RunInfo & { rows: CountRow[] };
}
