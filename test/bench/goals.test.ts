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

/** Every case a full run has, each at 100 µs unless `medians` says otherwise. */
function run(medians: Record<string, number>): CaseResult[] {
  const ids = new Set([...latest.cases.map((item) => item.id), ...Object.keys(medians)]);
  return [...ids].map((id) => ({
    id,
    db: id.startsWith('postgres.') ? 'postgres' : 'sqlite',
    median: medians[id] ?? 100,
    p99: 0,
    samples: 1,
  }));
}

const http = latest.http as HttpCaseResult[];

function checkOf(cases: CaseResult[], subject: string) {
  const found = checkGoals(cases, http).find((check) => check.subject === subject);
  if (!found) throw new Error(`no goal check for ${subject}`);
  return found;
}

describe('bench goal checks', () => {
  it('holds a Postgres adapter fresh call, and its floor, against the mutation in a transaction', () => {
    const cases = run({
      'postgres.trpc.unguarded': 500,
      'postgres.trpc.unguarded-tx': 1000,
      'postgres.trpc.fresh': 1300,
      'postgres.trpc.fresh-floor': 1200,
    });
    const check = checkOf(cases, 'postgres.trpc.fresh');
    expect(check.against).toBe('postgres.trpc.unguarded-tx');
    expect(check.value).toBeCloseTo(1.3);
    expect(check.met).toBe(true);
    expect(check.best).toEqual({
      subject: 'postgres.trpc.fresh-floor',
      value: 1.2,
      reachable: true,
    });
  });

  it('calls a floor above the limit out of reach', () => {
    const cases = run({
      'postgres.graphql.unguarded-tx': 1000,
      'postgres.graphql.fresh': 1500,
      'postgres.graphql.fresh-floor': 1400,
    });
    const check = checkOf(cases, 'postgres.graphql.fresh');
    expect(check.met).toBe(false);
    expect(check.best).toMatchObject({ subject: 'postgres.graphql.fresh-floor', reachable: false });
    expect(check.best?.value).toBeCloseTo(1.4);
  });

  it('holds a SQLite adapter fresh call, and its floor, against the unguarded mutation', () => {
    const cases = run({
      'sqlite.trpc.unguarded': 100,
      'sqlite.trpc.unguarded-tx': 200,
      'sqlite.trpc.fresh': 180,
      'sqlite.trpc.fresh-floor': 120,
    });
    const check = checkOf(cases, 'sqlite.trpc.fresh');
    expect(check.against).toBe('sqlite.trpc.unguarded');
    expect(check.value).toBeCloseTo(1.8);
    expect(check.best).toEqual({ subject: 'sqlite.trpc.fresh-floor', value: 1.2, reachable: true });
  });

  it("bounds the core's fresh call by the design floor of the same database", () => {
    const cases = run({
      'postgres.floor.insert-tx': 1000,
      'postgres.core.fresh': 1400,
      'postgres.floor.design': 1300,
    });
    const check = checkOf(cases, 'postgres.core.fresh');
    expect(check.against).toBe('postgres.floor.insert-tx');
    expect(check.best).toEqual({ subject: 'postgres.floor.design', value: 1.3, reachable: true });
  });

  it("gives each floor case the baseline of the goal it bounds (the cases table's ratio)", () => {
    const checks = checkGoals(run({}), http).filter(
      (check) => check.best && !check.subject.startsWith('http.'),
    );
    expect(checks.length).toBeGreaterThanOrEqual(10);
    for (const check of checks) {
      const db = check.subject.startsWith('postgres.') ? 'postgres' : 'sqlite';
      const floor = check.best!.subject.slice(db.length + 1);
      expect(`${db}.${baselineOf(db, floor)}`, check.best!.subject).toBe(check.against);
    }
  });
});
