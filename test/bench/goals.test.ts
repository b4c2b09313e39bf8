/**
 * The bench's goal checks (bench/goals.ts) on a run whose numbers the test chooses: each
 * check compares the right two cases, and carries the floor measured for it against the same
 * baseline. docs/benchmarks.md states "out of reach" from these, so a floor wired to the wrong
 * case or baseline would put a false claim in the docs.
 */
import { describe, expect, it } from 'vitest';
import { baselineOf } from '../../bench/baselines.js';
import { checkGoals, digitsFor } from '../../bench/goals.js';
import latest from '../../bench/results/latest.json' with { type: 'json' };
import type { CaseResult, HttpCaseResult } from '../../bench/results.js';

/** The database a case id names by its prefix. */
function dbOf(id: string): CaseResult['db'] {
  return id.startsWith('postgres.') ? 'postgres' : 'sqlite';
}

/**
 * Every case a full run has, each at 100 µs unless `medians` says otherwise, with the
 * per-round medians `rounds` gives (none otherwise).
 */
function run(medians: Record<string, number>, rounds: Record<string, number[]> = {}): CaseResult[] {
  const ids = new Set([...latest.cases.map((item) => item.id), ...Object.keys(medians)]);
  return [...ids].map((id) => ({
    id,
    db: dbOf(id),
    median: medians[id] ?? 100,
    p99: 0,
    samples: 1,
    ...(rounds[id] ? { rounds: rounds[id] } : {}),
  }));
}

const http = latest.http as HttpCaseResult[];

/** The goal check of `subject` on a run with these medians (and per-round medians). */
function checkOf(
  medians: Record<string, number>,
  subject: string,
  rounds: Record<string, number[]> = {},
) {
  const found = checkGoals(run(medians, rounds), http).find((check) => check.subject === subject);
  if (!found) throw new Error(`no goal check for ${subject}`);
  return found;
}

/** A goal check on chosen medians: what it compares, and the floor it carries. */
interface WiringCase {
  name: string;
  medians: Record<string, number>;
  subject: string;
  against: string;
  value?: number;
  met?: boolean;
  best: { subject: string; value: number; reachable: boolean };
}

const wiring: WiringCase[] = [
  {
    name: 'holds a Postgres adapter fresh call, and its floor, against the mutation in a transaction',
    medians: {
      'postgres.trpc.unguarded': 500,
      'postgres.trpc.unguarded-tx': 1000,
      'postgres.trpc.fresh': 1300,
      'postgres.trpc.fresh-floor-adapter': 1200,
    },
    subject: 'postgres.trpc.fresh',
    against: 'postgres.trpc.unguarded-tx',
    value: 1.3,
    met: true,
    best: { subject: 'postgres.trpc.fresh-floor-adapter', value: 1.2, reachable: true },
  },
  {
    name: 'holds a SQLite adapter fresh call, and its floor, against the unguarded mutation',
    medians: {
      'sqlite.trpc.unguarded': 100,
      'sqlite.trpc.unguarded-tx': 200,
      'sqlite.trpc.fresh': 180,
      'sqlite.trpc.fresh-floor-adapter': 120,
    },
    subject: 'sqlite.trpc.fresh',
    against: 'sqlite.trpc.unguarded',
    value: 1.8,
    best: { subject: 'sqlite.trpc.fresh-floor-adapter', value: 1.2, reachable: true },
  },
  {
    name: "bounds an adapter's replay by the least adapter's replay, not by the plain server's read",
    medians: {
      'sqlite.trpc.unguarded': 100,
      'sqlite.trpc.replay': 82,
      'sqlite.trpc.replay-floor': 66,
      'sqlite.trpc.replay-floor-adapter': 74,
    },
    subject: 'sqlite.trpc.replay',
    against: 'sqlite.trpc.unguarded',
    value: 0.82,
    met: false,
    best: { subject: 'sqlite.trpc.replay-floor-adapter', value: 0.74, reachable: false },
  },
  {
    name: "bounds the core's replay on Postgres by the shipped replay's raw statements",
    medians: {
      'postgres.floor.insert-tx': 1000,
      'postgres.core.replay': 480,
      'postgres.floor.design-replay': 300,
    },
    subject: 'postgres.core.replay',
    against: 'postgres.floor.insert-tx',
    value: 0.48,
    met: false,
    best: { subject: 'postgres.floor.design-replay', value: 0.3, reachable: true },
  },
  {
    name: "bounds the core's fresh call by the design floor of the same database",
    medians: {
      'postgres.floor.insert-tx': 1000,
      'postgres.core.fresh': 1400,
      'postgres.floor.design': 1300,
    },
    subject: 'postgres.core.fresh',
    against: 'postgres.floor.insert-tx',
    best: { subject: 'postgres.floor.design', value: 1.3, reachable: true },
  },
];

describe('bench goal checks', () => {
  it.each(wiring)('$name', ({ medians, subject, against, value, met, best }) => {
    const check = checkOf(medians, subject);
    expect(check.against).toBe(against);
    if (value !== undefined) expect(check.value).toBeCloseTo(value);
    if (met !== undefined) expect(check.met).toBe(met);
    expect(check.best).toEqual(best);
  });

  it('calls a floor above the limit out of reach', () => {
    const check = checkOf(
      {
        'postgres.graphql.unguarded-tx': 1000,
        'postgres.graphql.fresh': 1500,
        'postgres.graphql.fresh-floor-adapter': 1400,
      },
      'postgres.graphql.fresh',
    );
    expect(check.met).toBe(false);
    expect(check.best).toMatchObject({
      subject: 'postgres.graphql.fresh-floor-adapter',
      reachable: false,
    });
    expect(check.best?.value).toBeCloseTo(1.4);
  });

  describe('with per-round medians', () => {
    /** Twenty rounds of `base` µs, and of `base × ratio` µs, the ratio cycling through `ratios`. */
    const rounds = (base: number, ratios: number[]) =>
      Array.from({ length: 20 }, (_, round) => base * ratios[round % ratios.length]!);
    const medians = {
      'sqlite.trpc.unguarded': 100,
      'sqlite.trpc.fresh': 180,
      'sqlite.trpc.fresh-floor-adapter': 130,
    };

    it('carries the interval of the value and of the floor', () => {
      const check = checkOf(medians, 'sqlite.trpc.fresh', {
        'sqlite.trpc.unguarded': rounds(100, [1]),
        'sqlite.trpc.fresh': rounds(100, [1.75, 1.85]),
        'sqlite.trpc.fresh-floor-adapter': rounds(100, [1.28, 1.32]),
      });
      expect(check.interval?.[0]).toBeCloseTo(1.75);
      expect(check.interval?.[1]).toBeCloseTo(1.85);
      expect(check.best).toMatchObject({ reachable: false });
      expect(check.best?.interval?.[0]).toBeCloseTo(1.28);
    });

    it('does not call a floor out of reach while its interval reaches under the limit', () => {
      // The floor's median ratio is over 1.25, but its rounds are not all over it.
      const check = checkOf(medians, 'sqlite.trpc.fresh', {
        'sqlite.trpc.unguarded': rounds(100, [1]),
        'sqlite.trpc.fresh': rounds(100, [1.8]),
        'sqlite.trpc.fresh-floor-adapter': rounds(100, [1.2, 1.3, 1.35]),
      });
      expect(check.best?.value).toBeCloseTo(1.3);
      expect(check.best?.interval?.[0]).toBeLessThan(1.25);
      expect(check.best?.reachable).toBe(true);
    });
  });

  it("gives each floor case the baseline of the goal it bounds (the cases table's ratio)", () => {
    const checks = checkGoals(run({}), http).filter(
      (check) => check.best && !check.subject.startsWith('http.'),
    );
    expect(checks.length).toBeGreaterThanOrEqual(10);
    for (const check of checks) {
      const db = dbOf(check.subject);
      const floor = check.best!.subject.slice(db.length + 1);
      expect(`${db}.${baselineOf(db, floor)}`, check.best!.subject).toBe(check.against);
    }
  });

  it('shows a third decimal where two would round the value across its limit', () => {
    const goal = { goal: '', subject: '', against: '', limit: 1.35, met: false } as const;
    expect(digitsFor({ ...goal, value: 1.3547, bound: 'at most' })).toBe(3);
    expect(digitsFor({ ...goal, value: 1.36, bound: 'at most' })).toBe(2);
    expect(digitsFor({ ...goal, value: 1.349, bound: 'at most', met: true })).toBe(2);
    expect(digitsFor({ ...goal, value: 0.6951, bound: 'at least', limit: 0.7 })).toBe(3);
  });
});
