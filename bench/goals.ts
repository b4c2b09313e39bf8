/**
 * The project's cost goals (docs/benchmarks.md), checked against one run's medians. Each is a
 * ratio of two cases measured in the same interleaved rounds:
 *
 * - SQLite: a fresh guarded mutation costs at most 1.25× the unguarded one, through the core
 *   and through both adapters; a replay at most 0.7× through both adapters;
 * - Postgres: a fresh guarded mutation costs at most 1.35× the unguarded mutation in a Drizzle
 *   transaction of its own, a replay at most 0.4× it (core and both adapters);
 * - HTTP on Postgres (64 connections, 1 and 2 processes): guarded throughput at least 0.7×
 *   the unguarded, with distinct keys and with duplicates; the p99s go beside it;
 * - pass-through (SPEC S17): a query through a server with the library costs at most 1.02×
 *   the same server without it.
 *
 * Where the same run measured what no guarded call could beat, the check carries it as its
 * `best`: for the adapters' replays, the replay answered by the least adapter, which only reads
 * the key header, hashes the request, reads the record and returns its stored result
 * (`<surface>.replay-floor-adapter`, bench/apps/least-replay.ts); for the adapters' fresh
 * calls, the same mutation whose resolver writes its row and a complete record in one
 * transaction with a fresh design's raw statements, behind the least adapter, which only reads
 * the key header, hashes the request and wraps the mutation, as any guarding middleware or
 * plugin must (`<surface>.fresh-floor-adapter`, bench/apps); for the core's fresh call on
 * either database, a fresh design's raw statements around the same insert (`floor.design`,
 * timed in the same rounds as `core.fresh`: a floor from another group of rounds can land
 * above the guarded call it is meant to bound, as one run's did); for the core's replay on
 * Postgres, the shipped replay's raw statements on the same record (`floor.design-replay`, in
 * the same rounds as `core.replay`); for HTTP, the servers that send the two cheapest designs'
 * statements with no guard at all (`design-*`, the better of the two).
 * A goal whose bound is out of reach cannot be met by cutting the library's own code. In
 * process, each ratio is paired by round and comes with an interval (interval.ts), and a
 * floor is out of reach only when its whole interval is past the limit: a floor just over
 * the line in one run can be under it in the next.
 *
 * The peer (@node-idempotency/core) is compared in the report, not held to a goal: it does
 * not do the same job (see docs/benchmarks.md).
 */
import { baselineOf } from './baselines.js';
import { pairedRatio } from './interval.js';
import type { CaseResult, GoalCheck, HttpCaseResult, Interval } from './results.js';

const SURFACES = ['graphql', 'trpc'] as const;

export function checkGoals(
  cases: readonly CaseResult[],
  http: readonly HttpCaseResult[],
): GoalCheck[] {
  const caseOf = (id: string) => {
    const found = cases.find((item) => item.id === id);
    if (!found) throw new Error(`goals: no case ${id}`);
    return found;
  };
  /**
   * `subject ÷ against`: paired by round, with its interval, where the run kept each round's
   * medians (interval.ts); else the ratio of the two cases' medians.
   */
  const ratioOf = (subject: string, against: string): { value: number; interval?: Interval } =>
    pairedRatio(caseOf(subject).rounds, caseOf(against).rounds) ?? {
      value: caseOf(subject).median / caseOf(against).median,
    };
  /** `<db>.<case>` at most `limit` × its baseline (baselines.ts). */
  const atMost = (goal: string, db: CaseResult['db'], subject: string, limit: number) => {
    const against = baselineOf(db, subject);
    if (!against) throw new Error(`goals: ${subject} has no baseline`);
    const [measured, base] = [`${db}.${subject}`, `${db}.${against}`];
    const { value, interval } = ratioOf(measured, base);
    const checked = check(goal, measured, base, value, limit, 'at most');
    return interval ? { ...checked, interval } : checked;
  };

  /**
   * The check with its floor, when the run has that case: its value against the same
   * baseline. The floors are timed in the same rounds as the cases they bound:
   * - `<db>.floor.design`, a core fresh goal's: a fresh design's raw statements around the
   *   same insert (bench/db/types.ts, `freshDesign`); the library's own code cannot take a
   *   fresh call below it;
   * - `<db>.<surface>.fresh-floor-adapter`, an adapter's fresh goal's: the same mutation on a
   *   server without the library whose resolver writes its row and a complete record in one
   *   transaction with a fresh design's raw statements (bench/db/types.ts, `insertWithRecord`),
   *   behind a middleware or plugin that does only what any guarding one must: read the key
   *   header, hash the request once (as the least replay does), wrap the mutation, hand its
   *   resolver a transaction handle, and run it where the store runs guarded work (on SQLite
   *   in an AsyncLocalStorage frame, so that a guarded call nested in it joins its
   *   transaction, SPEC S23);
   * - `<db>.floor.design-replay`, the core replay goal's: the shipped replay's raw statements
   *   on the same record (bench/db/types.ts, `replayDesign`);
   * - `<db>.<surface>.replay-floor-adapter`, an adapter's replay goal's: the replay answered,
   *   without the library, by a middleware or plugin that does only what any guarding one
   *   must: take the key from the header, hash the request once, read the record, and return
   *   its stored result marked as a replay instead of running the resolver.
   */
  const withFloor = (checked: GoalCheck, floor: string): GoalCheck => {
    if (!cases.some((item) => item.id === floor)) return checked;
    const { value, interval } = ratioOf(floor, checked.against);
    // Out of reach only when the noise could not put the floor under the limit either.
    const reachable = (interval ? interval[0] : value) <= checked.limit;
    return {
      ...checked,
      best: { subject: floor, value, ...(interval ? { interval } : {}), reachable },
    };
  };
  /** A fresh goal's floor: the design's for the core, the least adapter's for an adapter. */
  const freshFloor = (db: CaseResult['db'], surface: string) =>
    surface === 'core' ? `${db}.floor.design` : `${db}.${surface}.fresh-floor-adapter`;

  const checks: GoalCheck[] = [];
  for (const surface of ['core', ...SURFACES]) {
    const fresh = atMost('fresh ≤ 1.25× unguarded', 'sqlite', `${surface}.fresh`, 1.25);
    checks.push(withFloor(fresh, freshFloor('sqlite', surface)));
  }
  /** A replay goal's floor: the shipped replay's statements (core), the least adapter's (else). */
  const replayFloor = (db: CaseResult['db'], surface: string) =>
    surface === 'core' ? `${db}.floor.design-replay` : `${db}.${surface}.replay-floor-adapter`;
  /** A replay goal, with its floor from the same run. */
  const replay = (goal: string, db: CaseResult['db'], surface: string, limit: number) =>
    withFloor(atMost(goal, db, `${surface}.replay`, limit), replayFloor(db, surface));
  for (const surface of SURFACES) {
    checks.push(replay('replay ≤ 0.7× unguarded', 'sqlite', surface, 0.7));
  }
  for (const surface of ['core', ...SURFACES]) {
    const fresh = atMost(
      'fresh ≤ 1.35× unguarded in a transaction',
      'postgres',
      `${surface}.fresh`,
      1.35,
    );
    checks.push(
      withFloor(fresh, freshFloor('postgres', surface)),
      replay('replay ≤ 0.4× unguarded in a transaction', 'postgres', surface, 0.4),
    );
  }
  for (const db of ['sqlite', 'postgres'] as const) {
    for (const surface of SURFACES) {
      checks.push(atMost('pass-through ≤ 1.02×', db, `${surface}.query-plugin`, 1.02));
    }
  }
  for (const result of http) {
    if (result.variant !== 'distinct' && result.variant !== 'duplicates') continue;
    const unguarded = http.find(
      (item) => item.processes === result.processes && item.variant === 'unguarded',
    );
    if (!unguarded) throw new Error(`goals: no unguarded HTTP run for ${result.id}`);
    const designs = http.filter(
      (item) => item.processes === result.processes && item.variant.startsWith('design-'),
    );
    const best = designs.sort((a, b) => b.requestsPerSecond - a.requestsPerSecond)[0];
    const ceiling = best && best.requestsPerSecond / unguarded.requestsPerSecond;
    checks.push({
      ...check(
        'HTTP throughput ≥ 0.7× unguarded',
        result.id,
        unguarded.id,
        result.requestsPerSecond / unguarded.requestsPerSecond,
        0.7,
        'at least',
      ),
      note: `p99 ${result.p99Ms.toFixed(0)} ms vs. ${unguarded.p99Ms.toFixed(0)} ms; median ${result.medianMs.toFixed(0)} ms vs. ${unguarded.medianMs.toFixed(0)} ms`,
      ...(best && ceiling !== undefined
        ? { best: { subject: best.id, value: ceiling, reachable: ceiling >= 0.7 } }
        : {}),
    });
  }
  return checks;
}

function check(
  goal: string,
  subject: string,
  against: string,
  value: number,
  limit: number,
  bound: GoalCheck['bound'],
): GoalCheck {
  const met = bound === 'at most' ? value <= limit : value >= limit;
  return { goal, subject, against, value, limit, bound, met };
}

/** How far a check is from its goal: 1 on the line, above 1 missed, whichever its bound. */
export function shortfall(goal: GoalCheck): number {
  if (goal.bound === 'at most') return Math.max(0, goal.value) / goal.limit;
  return goal.value > 0 ? goal.limit / goal.value : Number.POSITIVE_INFINITY;
}

/**
 * Two decimals, or three where two would round a missed goal onto its limit (1.3547 shown as
 * "1.35×, not met" against "at most 1.35×") or a met one past it.
 */
export function digitsFor(goal: GoalCheck): number {
  const shown = Number(goal.value.toFixed(2));
  const shownMet = goal.bound === 'at most' ? shown <= goal.limit : shown >= goal.limit;
  return shownMet === goal.met ? 2 : 3;
}
