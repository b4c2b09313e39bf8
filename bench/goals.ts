/**
 * The project's cost goals (docs/benchmarks.md), checked against one run's medians:
 * - a fresh guarded mutation costs at most 1.25× the unguarded one on SQLite, and at most the
 *   unguarded one plus 2 database round trips on Postgres (a round trip: a raw `SELECT 1`,
 *   measured in the same rounds);
 * - a replay costs at most 0.7× the unguarded mutation;
 * - a query through a server with the plugin costs at most 1.02× the same server without it;
 * - the guard is ahead of the peer (@node-idempotency/core) on every case both do.
 */
import type { CaseResult, GoalCheck } from './results.js';

export function checkGoals(cases: readonly CaseResult[]): GoalCheck[] {
  const median = (id: string) => {
    const found = cases.find((item) => item.id === id);
    if (!found) throw new Error(`goals: no case ${id}`);
    return found.median;
  };
  const ratio = (goal: string, subject: string, against: string, limit: number): GoalCheck => {
    const value = median(subject) / median(against);
    return { goal, subject, against, value, limit, unit: '×', met: value <= limit };
  };
  const checks: GoalCheck[] = [];
  for (const surface of ['graphql', 'trpc']) {
    checks.push(
      ratio(
        'fresh ≤ 1.25× unguarded',
        `sqlite.${surface}.fresh`,
        `sqlite.${surface}.unguarded`,
        1.25,
      ),
    );
    const subject = `postgres.${surface}.fresh`;
    const against = `postgres.${surface}.unguarded`;
    const value = (median(subject) - median(against)) / median('postgres.floor.round-trip');
    checks.push({
      goal: 'fresh ≤ unguarded + 2 round trips',
      subject,
      against,
      value,
      limit: 2,
      unit: 'round trips',
      met: value <= 2,
    });
  }
  for (const db of ['sqlite', 'postgres']) {
    for (const surface of ['graphql', 'trpc']) {
      checks.push(
        ratio(
          'replay ≤ 0.7× unguarded',
          `${db}.${surface}.replay`,
          `${db}.${surface}.unguarded`,
          0.7,
        ),
      );
    }
  }
  for (const db of ['sqlite', 'postgres']) {
    for (const surface of ['graphql', 'trpc']) {
      checks.push(
        ratio(
          'pass-through ≤ 1.02×',
          `${db}.${surface}.query-plugin`,
          `${db}.${surface}.query-plain`,
          1.02,
        ),
      );
    }
  }
  for (const db of ['sqlite', 'postgres']) {
    for (const storage of ['memory', 'redis']) {
      for (const path of ['fresh', 'replay']) {
        checks.push(
          ratio(
            'ahead of the peer (≤ 1×)',
            `${db}.core.${path}`,
            `${db}.peer-${storage}.${path}`,
            1,
          ),
        );
      }
    }
  }
  return checks;
}
