/**
 * The bench's generated page (bench/report.ts): docs/benchmarks.md is `docsPage` of the
 * published results, its ratios say met or not against the project's goals, and a run that
 * renewed only the counts says which figures are from which run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { costTable, countsTable, docsPage } from '../../bench/report.js';
import latest from '../../bench/results/latest.json' with { type: 'json' };
import type { BenchReport, CaseResult } from '../../bench/results.js';

const report = latest as unknown as BenchReport;

/** Every case of the published run, each round at 100 µs unless `rounds` says otherwise. */
function casesWith(perRound: Record<string, number>): CaseResult[] {
  return report.timed.cases.map((item) => ({
    ...item,
    rounds: Array.from({ length: 10 }, () => perRound[item.id] ?? 100),
  }));
}

describe('docsPage', () => {
  it('is docs/benchmarks.md, for the published results', () => {
    const page = readFileSync(new URL('../../docs/benchmarks.md', import.meta.url), 'utf8');
    expect(page).toBe(docsPage(report));
  });

  it('names the run of each kind of figure when only the counts were renewed', () => {
    const counted = { ...report.counted, generatedAt: '2027-01-02T03:04:05.000Z' };
    const page = docsPage({ ...report, counted });
    expect(page).toContain(`- Timed figures: the last full run, ${report.timed.generatedAt}`);
    expect(page).toContain('- Counted figures: 2027-01-02T03:04:05.000Z');
    expect(page).toContain('## Design research (archived)');
  });
});

describe('costTable', () => {
  it('holds SQLite against the autocommit mutation, Postgres against the one in a transaction', () => {
    const table = costTable(
      casesWith({
        'sqlite.trpc.fresh': 130,
        'sqlite.trpc.unguarded-tx': 200,
        'postgres.trpc.fresh': 130,
        'postgres.trpc.unguarded-tx': 100,
        'postgres.trpc.unguarded': 50,
        'postgres.trpc.replay': 45,
      }),
    );
    expect(table).toContain('| sqlite, tRPC |');
    expect(table).toMatch(
      /\| sqlite, tRPC \|.*\| 1\.30× \(1\.30-1\.30\), ≤ 1\.25×: \*\*not met\*\* \|/,
    );
    expect(table).toMatch(
      /\| postgres, tRPC \|.*\| 1\.30× \(1\.30-1\.30\), ≤ 1\.35×: met \| 0\.45× \(0\.45-0\.45\), ≤ 0\.4×: \*\*not met\*\* \|$/m,
    );
  });
});

describe('countsTable', () => {
  it('gives round trips / statements, and when the answer came before the last round trip', () => {
    const count = (roundTrips: number, statements: number, answeredAfter = roundTrips) => ({
      roundTrips,
      statements,
      answeredAfter,
    });
    const table = countsTable([
      {
        store: 'postgres',
        driver: 'node-postgres',
        unguarded: count(3, 3),
        fresh: count(3, 6),
        replay: count(2, 4, 1),
        inFlight: count(0, 0),
      },
    ]);
    expect(table).toContain(
      '| Postgres, node-postgres | 3 / 3 | 3 / 6 | 2 / 4 (answered after 1) | 0 / 0 | n/a |',
    );
  });
});
