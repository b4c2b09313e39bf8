/**
 * The bench's goal checks (bench/goals.ts) on a run whose numbers the test chooses: each
 * check compares the right two cases, and carries the floor measured for it against the same
 * baseline. docs/benchmarks.md states "out of reach" from these, so a floor wired to the wrong
 * case or baseline would put a false claim in the docs.
 */
import { describe, expect, it } from 'vitest';
import { baselineOf } from '../../bench/baselines.js';
import { checkGoals } from '../../bench/goals.js';
import latest from '../../bench/results/latest.json' with { type: 'json' };
import type { CaseResult, HttpCaseResult } from '../../bench/results.js';

/** The database a case id names by its prefix. */
function dbOf(id: string): CaseResult['db'] {
  return id.startsWith('postgres.') ? 'postgres' : 'sqlite';
}

/** Every case a full run has, each at 100 µs unless `medians` says otherwise. */
function run(medians: Record<string, number>): CaseResult[] {
  const ids = new Set([...latest.cases.map((item) => item.id), ...Object.keys(medians)]);
  return [...ids].map((id) => ({
    id,
    db: dbOf(id),
    median: medians[id] ?? 100,
    p99: 0,
    samples: 1,
  }));
}

const http = latest.http as HttpCaseResult[];

/** The goal check of `subject` on a run with these medians. */
function checkOf(medians: Record<string, number>, subject: string) {
  const found = checkGoals(run(medians), http).find((check) => check.subject === subject);
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
      'postgres.trpc.fresh-floor': 1200,
    },
    subject: 'postgres.trpc.fresh',
    against: 'postgres.trpc.unguarded-tx',
    value: 1.3,
    met: true,
    best: { subject: 'postgres.trpc.fresh-floor', value: 1.2, reachable: true },
  },
  {
    name: 'holds a SQLite adapter fresh call, and its floor, against the unguarded mutation',
    medians: {
      'sqlite.trpc.unguarded': 100,
      'sqlite.trpc.unguarded-tx': 200,
      'sqlite.trpc.fresh': 180,
      'sqlite.trpc.fresh-floor': 120,
    },
    subject: 'sqlite.trpc.fresh',
    against: 'sqlite.trpc.unguarded',
    value: 1.8,
    best: { subject: 'sqlite.trpc.fresh-floor', value: 1.2, reachable: true },
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
        'postgres.graphql.fresh-floor': 1400,
      },
      'postgres.graphql.fresh',
    );
    expect(check.met).toBe(false);
    expect(check.best).toMatchObject({ subject: 'postgres.graphql.fresh-floor', reachable: false });
    expect(check.best?.value).toBeCloseTo(1.4);
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
});
