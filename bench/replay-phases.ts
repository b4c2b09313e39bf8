/**
 * Where a Postgres replay's time goes, round by round (not a goal check: `npm run bench` is).
 *
 * It runs the bench's floor group (bench/cases/floor.ts) through the bench's own
 * `measureGroup` (bench/measure.ts: each case a time-boxed batch per round, in rotating order)
 * and splits each call of the two replays into three phases:
 * - `before`: from the call to the moment its opening query (BEGIN, `_begin` and the
 *   savepoint, one simple-protocol query) is handed to node-postgres: the guard, the
 *   fingerprint, the pool's checkout, the query's text;
 * - `query`: until its answer is in (the send, the server, the parse of its three results);
 * - `after`: until the call resolves (the answer read, the ROLLBACK sent, the stored result
 *   parsed and handed back).
 *
 * `core.replay` is `guard.run` on a key with a record; `floor.design-replay` sends the same
 * opening query raw, with nothing around it. Run it as it is and under `taskset -c 0` (this
 * process kept on one CPU). On the two-vCPU VM of stop 32 (kernel 6.18.44-fc-v1272), 30
 * rounds each run (medians over the rounds):
 * - as it is, the guarded replay's `query` phase was 126-154 µs against the raw one's
 *   80-109 (four runs, of the first version, which ran batches of 150 calls), and 149-175
 *   against 107-111 (two runs of this one), though both send the same query for the same
 *   record; most rounds sat 40-60 µs above the raw one, a few level with it;
 * - pinned, the two `query` phases were within 8 µs of each other in every run (four and
 *   two), and the guarded replay cost 15-25 µs more than the raw one in `total` (first
 *   version) and 34-38 µs (this one).
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
import { measureGroup, summarize, type TimedCase } from './measure.js';

const rounds = Number(process.argv[2] ?? 20);
if (!Number.isInteger(rounds) || rounds < 1) {
  throw new Error(`replay-phases: rounds must be a positive integer, got ${process.argv[2]}`);
}
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

type Phases = { total: number; before: number; query: number; after: number };
const PHASES = ['total', 'before', 'query', 'after'] as const;
const micros = (from: bigint, to: bigint) => Number(to - from) / 1000;
/** The median of each phase over `list`. */
const medians = (list: Phases[]): Phases =>
  Object.fromEntries(
    PHASES.map((phase) => [phase, summarize(list.map((phases) => phases[phase])).median]),
  ) as Phases;

/**
 * Each watched case's calls, batch by batch. `measureGroup` runs a case's batch with no other
 * case between its calls, and never one case's batches back to back (the group has more than
 * two cases), so a call that follows another case's begins a batch: one per round.
 */
const batches = new Map<string, Phases[][]>(WATCHED.map((id) => [id, []]));
let previous: string | undefined;

async function timedCall(item: TimedCase): Promise<void> {
  const own: NonNullable<typeof marks> = {};
  marks = own;
  const start = process.hrtime.bigint();
  await item.run();
  const end = process.hrtime.bigint();
  marks = undefined;
  if (!own.sent || !own.answered) throw new Error(`${item.id}: no opening query was seen`);
  const list = batches.get(item.id)!;
  if (previous !== item.id) list.push([]);
  list.at(-1)!.push({
    total: micros(start, end),
    before: micros(start, own.sent),
    query: micros(own.sent, own.answered),
    after: micros(own.answered, end),
  });
}

const db = await openPostgresBench();
const floor = await floorCases(db);
const cases: TimedCase[] = floor.cases.map((item) => ({
  id: item.id,
  run: async () => {
    if (WATCHED.includes(item.id)) await timedCall(item);
    else await item.run();
    previous = item.id;
  },
}));
// Warmed here rather than by `measureGroup`, whose warm calls would count as a first batch.
for (const item of floor.cases) for (let i = 0; i < 50; i++) await item.run();
// The batch length of `npm run bench` (bench/run.ts).
await measureGroup(cases, { rounds, batchMs: 35, warmup: 0 });

const perRound = new Map([...batches].map(([id, list]) => [id, list.map(medians)]));
for (let round = 0; round < rounds; round++) {
  const line = [...perRound].map(([id, list]) => `${id} ${format(list[round]!)}`);
  console.log(`round ${String(round).padStart(2)}  ${line.join('  |  ')}`);
}
console.log('\nmedian over the rounds (µs per call):');
for (const [id, list] of perRound) console.log(`  ${id.padEnd(20)} ${format(medians(list))}`);
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
