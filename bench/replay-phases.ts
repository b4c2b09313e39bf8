/**
 * Where a Postgres replay's time goes, round by round (not a goal check: `npm run bench` is).
 *
 * It runs the bench's floor group (bench/cases/floor.ts: the same cases, each a batch per
 * round in rotating order, as bench/measure.ts runs them) and splits each call of the two
 * replays into three phases:
 * - `before`: from the call to the moment its opening query (BEGIN, `_begin` and the
 *   savepoint, one simple-protocol query) is handed to node-postgres: the guard, the
 *   fingerprint, the pool's checkout, the query's text;
 * - `query`: until its answer is in (the send, the server, the parse of its three results);
 * - `after`: until the call resolves (the answer read, the ROLLBACK sent, the stored result
 *   parsed and handed back).
 *
 * `core.replay` is `guard.run` on a key with a record; `floor.design-replay` sends the same
 * opening query raw, with nothing around it. Run it as it is and under `taskset -c 0` (this
 * process kept on one CPU). On the two-vCPU VM of stop 32 (kernel 6.18.44-fc-v1272), four
 * runs each way, 30 rounds each (medians over the rounds):
 * - as it is, the guarded replay's `query` phase was 126-154 µs against the raw one's
 *   80-109, though both send the same query for the same record; most rounds sat about 45
 *   µs above the raw one, a few level with it;
 * - pinned, the two `query` phases were within 5 µs of each other in every run, and the
 *   guarded replay cost 15-25 µs more than the raw one (`total`).
 * So the difference `npm run bench` shows between the two (goal table: 0.52× against 0.27×
 * in the run published as 99c7f38, 0.39× against 0.20× in df5c379's, on the same library
 * code) is mostly where the kernel runs this process and the server's backends, not work of
 * the library's.
 *
 *   npx tsx bench/replay-phases.ts [rounds]
 *   taskset -c 0 npx tsx bench/replay-phases.ts [rounds]
 *
 * Needs the Postgres of BENCH_DATABASE_URL.
 */
import pg from 'pg';
import { floorCases } from './cases/floor.js';
import { openPostgresBench } from './db/postgres.js';
import { nearestRank } from './measure.js';

const rounds = Number(process.argv[2] ?? 20);
if (!Number.isInteger(rounds) || rounds < 1) {
  throw new Error(`replay-phases: rounds must be a positive integer, got ${process.argv[2]}`);
}
/** Calls per replay case per round, and per other case (which only keeps the group's mix). */
const REPLAY_CALLS = 150;
const OTHER_CALLS = 30;
const WATCHED = ['core.replay', 'floor.design-replay'];
/** How both replays' opening query begins (src/postgres/pool-transaction.ts, bench/db). */
const OPENING = 'begin isolation level read committed';

/** The current call's marks: the opening query handed over, and answered. */
let marks: { sent?: bigint; answered?: bigint } | undefined;

// Only in this process: every node-postgres client's `query`, timed when it sends the opening
// query of a watched call. Neither the store nor the bench exposes that moment otherwise.
const untimedQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function timedQuery(this: pg.Client, ...args: unknown[]) {
  const own = marks;
  if (!own || typeof args[0] !== 'string' || !args[0].startsWith(OPENING)) {
    return untimedQuery.apply(this, args);
  }
  own.sent = process.hrtime.bigint();
  return (untimedQuery.apply(this, args) as Promise<unknown>).then((result) => {
    own.answered = process.hrtime.bigint();
    return result;
  });
} as typeof pg.Client.prototype.query;

const micros = (from: bigint, to: bigint) => Number(to - from) / 1000;
const median = (values: number[]) =>
  nearestRank(
    [...values].sort((a, b) => a - b),
    0.5,
  );

const db = await openPostgresBench();
const floor = await floorCases(db);
const { cases } = floor;
for (const item of cases) for (let i = 0; i < 50; i++) await item.run();

type Phases = { total: number; before: number; query: number; after: number };
const perRound = new Map<string, Phases[]>(WATCHED.map((id) => [id, []]));

for (let round = 0; round < rounds; round++) {
  const line: string[] = [];
  for (let i = 0; i < cases.length; i++) {
    const item = cases[(i + round) % cases.length]!;
    if (!WATCHED.includes(item.id)) {
      for (let n = 0; n < OTHER_CALLS; n++) await item.run();
      continue;
    }
    const calls: Phases[] = [];
    for (let n = 0; n < REPLAY_CALLS; n++) {
      const own: NonNullable<typeof marks> = {};
      marks = own;
      const start = process.hrtime.bigint();
      await item.run();
      const end = process.hrtime.bigint();
      marks = undefined;
      if (!own.sent || !own.answered) throw new Error(`${item.id}: no opening query was seen`);
      calls.push({
        total: micros(start, end),
        before: micros(start, own.sent),
        query: micros(own.sent, own.answered),
        after: micros(own.answered, end),
      });
    }
    const phases: Phases = {
      total: median(calls.map((c) => c.total)),
      before: median(calls.map((c) => c.before)),
      query: median(calls.map((c) => c.query)),
      after: median(calls.map((c) => c.after)),
    };
    perRound.get(item.id)!.push(phases);
    line.push(`${item.id} ${format(phases)}`);
  }
  console.log(`round ${String(round).padStart(2)}  ${line.join('  |  ')}`);
}

console.log('\nmedian over the rounds (µs per call):');
for (const [id, list] of perRound) {
  const over = (key: keyof Phases) => median(list.map((phases) => phases[key]));
  console.log(
    `  ${id.padEnd(20)} ${format({ total: over('total'), before: over('before'), query: over('query'), after: over('after') })}`,
  );
}
console.log('the query phase, round by round (µs):');
for (const [id, list] of perRound) {
  console.log(`  ${id.padEnd(20)} ${list.map((phases) => phases.query.toFixed(0)).join(' ')}`);
}

await floor.close();
await db.close();

function format({ total, before, query, after }: Phases): string {
  const n = (value: number) => value.toFixed(0).padStart(4);
  return `total ${n(total)}  before ${n(before)}  query ${n(query)}  after ${n(after)}`;
}
