/**
 * The bench's generated page (bench/report.ts, `docsPage`): it names the run's Postgres round
 * trip and its unguarded insert in a transaction, which decide how the Postgres ratios read
 * on another host or in another run, and says nothing of them when the run has no round trip.
 */
import { describe, expect, it } from 'vitest';
import { docsPage } from '../../bench/report.js';
import latest from '../../bench/results/latest.json' with { type: 'json' };
import type { BenchReport } from '../../bench/results.js';

const report = latest as unknown as BenchReport;

/** The page of the published run, with one case's median replaced. */
function pageWithMedian(id: string, median: number): string {
  const cases = report.cases.map((item) => (item.id === id ? { ...item, median } : item));
  return docsPage({ ...report, cases });
}

describe('docsPage', () => {
  it("states this run's Postgres round trip beside the note on what it changes", () => {
    const page = pageWithMedian('postgres.floor.round-trip', 77);
    expect(page).toContain('on a host where a round trip costs less');
    expect(page).toContain('`SELECT 1` over loopback): 77.0 µs.');
  });

  it("states this run's unguarded insert in a transaction, in the Postgres goals' denominators", () => {
    const page = pageWithMedian('postgres.floor.insert-tx', 432.1);
    expect(page).toContain('The denominator of every Postgres fresh and replay goal holds');
    expect(page).toContain('alone\n  (`floor.insert-tx`): 432 µs.');
  });

  it('leaves the note out when the run timed no Postgres round trip', () => {
    const cases = report.cases.filter((item) => item.id !== 'postgres.floor.round-trip');
    const page = docsPage({ ...report, cases });
    expect(page).not.toContain('round trip costs less');
    expect(page).not.toContain('The denominator of every Postgres');
    expect(page).toContain(
      'Compare\n  ratios from one run, not absolute times across runs.\n\n## Goals',
    );
  });
});
