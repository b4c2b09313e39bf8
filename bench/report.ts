/** Turns a run into the printed table, bench/results/*.json and docs/benchmarks.md. */
import { designsTable } from './designs.js';
import { digitsFor } from './goals.js';
import type { BenchReport, CaseResult, GoalCheck, HttpCaseResult, Interval } from './results.js';

/** The least adapter's replay (bench/apps/least-replay.ts), as a tRPC middleware or a Yoga plugin. */
function leastReplayDescription(adapter: 'middleware' | 'plugin'): string {
  return `the replay floor through the least adapter: the replay answered by a ${adapter} that only does what any guarding one must (the key from the header, one SHA-256 of the request, the record read, its stored result parsed and returned, the response marked as a replay), the resolver not run`;
}

/** The least adapter's fresh call (bench/apps), as a tRPC middleware or a Yoga plugin. */
function leastFreshDescription(
  adapter: 'middleware' | 'plugin',
  mutation: 'operation' | 'procedure',
): string {
  return `the fresh floor through the least adapter: the same, behind a ${adapter} that only does what any guarding one must (the key from the header and one SHA-256 of the request, as for the least replay; the transaction handle in the context; the ${mutation} run, on SQLite in an AsyncLocalStorage frame as the store runs guarded work)`;
}

/** What each case id means, for readers of the table. */
const DESCRIPTIONS: Record<string, string> = {
  'graphql.unguarded': 'GraphQL mutation (1 insert), server without the plugin',
  'graphql.unguarded-tx': 'the same, the insert in a Drizzle transaction of its own',
  'graphql.fresh': 'GraphQL mutation, guarded, fresh key',
  'graphql.replay': 'GraphQL mutation, guarded, replay',
  'graphql.replay-floor':
    'the plain read: the mutation without the plugin, its resolver only reading the record (for comparison)',
  'graphql.replay-floor-adapter': leastReplayDescription('plugin'),
  'graphql.fresh-floor':
    "the fresh floor: the mutation without the plugin, its resolver writing the row and a complete record in one transaction with the design floor's raw statements",
  'graphql.fresh-floor-adapter': leastFreshDescription('plugin', 'operation'),
  'graphql.query-plain': 'GraphQL query, server without the plugin',
  'graphql.query-plugin': 'GraphQL query, server with the plugin (pass-through)',
  'trpc.unguarded': 'tRPC mutation (1 insert), no middleware',
  'trpc.unguarded-tx': 'the same, the insert in a Drizzle transaction of its own',
  'trpc.fresh': 'tRPC mutation, guarded, fresh key',
  'trpc.replay': 'tRPC mutation, guarded, replay',
  'trpc.replay-floor':
    'the plain read: the mutation without the middleware, its resolver only reading the record (for comparison)',
  'trpc.replay-floor-adapter': leastReplayDescription('middleware'),
  'trpc.fresh-floor':
    "the fresh floor: the mutation without the middleware, its resolver writing the row and a complete record in one transaction with the design floor's raw statements",
  'trpc.fresh-floor-adapter': leastFreshDescription('middleware', 'procedure'),
  'trpc.query-plain': 'tRPC query, router without the middleware',
  'trpc.query-plugin': 'tRPC query, router with guarded mutations (pass-through)',
  'floor.insert': 'the insert alone (autocommit), no framework',
  'floor.insert-tx': 'the insert in its own transaction, no guard',
  'floor.round-trip': 'one round trip: raw `SELECT 1`',
  'floor.round-trip-drizzle': '`SELECT 1` through Drizzle',
  'floor.store': "store floor: the store's claimAndRun around the insert, no guard",
  'floor.design':
    "design floor: a fresh design's raw statements around the insert, no library code (SQLite: record written last, the cheapest design; Postgres: the shipped statements, three round trips)",
  'floor.design-replay':
    "replay design floor: the shipped replay's raw statements on the same record, no library code (BEGIN with `_begin`, answered after that one round trip, the ROLLBACK after the answer)",
  'core.fresh': '`guard.run`, fresh key (no framework)',
  'core.replay': '`guard.run`, replay (no framework)',
  'peer-memory.fresh': '@node-idempotency/core, memory storage, fresh key',
  'peer-memory.replay': '@node-idempotency/core, memory storage, replay',
  'peer-redis.fresh': '@node-idempotency/core, Redis storage, fresh key',
  'peer-redis.replay': '@node-idempotency/core, Redis storage, replay',
};

const HTTP_DESCRIPTIONS: Record<HttpCaseResult['variant'], string> = {
  unguarded: 'mutation, server without the plugin',
  distinct: 'guarded, distinct keys',
  duplicates: 'guarded, 10% duplicate keys',
  'design-lock': 'no guard: the shipped one-transaction statements, three round trips',
  'design-claim-inside': 'no guard: claim row inside the transaction, three round trips',
};

export function time(us: number): string {
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  return `${us >= 100 ? us.toFixed(0) : us.toFixed(1)} µs`;
}

const shortId = (id: string) => id.split('.').slice(1).join('.');

export function casesTable(cases: readonly CaseResult[]): string {
  const lines = [
    '| database | case | what | median | p99 | samples | vs. | ratio |',
    '| --- | --- | --- | ---: | ---: | ---: | --- | ---: |',
  ];
  for (const item of cases) {
    lines.push(
      `| ${item.db} | ${shortId(item.id)} | ${DESCRIPTIONS[shortId(item.id)] ?? ''} | ${time(item.median)} | ${time(item.p99)} | ${item.samples} | ${item.baseline ? shortId(item.baseline) : ''} | ${item.ratio === undefined ? '' : `${item.ratio.toFixed(2)}×`} |`,
    );
  }
  return lines.join('\n');
}

export function httpTable(http: readonly HttpCaseResult[]): string {
  const lines = [
    '| processes | case | requests/s | median | p99 | responses | statuses | throughput vs. unguarded |',
    '| ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |',
  ];
  for (const item of http) {
    const statuses = Object.entries(item.statuses)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    lines.push(
      `| ${item.processes} | ${HTTP_DESCRIPTIONS[item.variant]} | ${item.requestsPerSecond.toFixed(0)} | ${item.medianMs.toFixed(1)} ms | ${item.p99Ms.toFixed(1)} ms | ${item.responses} | ${statuses}${item.errors ? `, errors: ${item.errors}` : ''} | ${item.ratio === undefined ? '' : `${item.ratio.toFixed(2)}×`} |`,
    );
  }
  return lines.join('\n');
}

export function goalsTable(goals: readonly GoalCheck[]): string {
  const lines = [
    '| goal | case | against | measured | met | best possible (same run) | |',
    '| --- | --- | --- | ---: | --- | --- | --- |',
  ];
  for (const goal of goals) {
    const best = goal.best
      ? `${ratio(goal.best.value, goal.best.interval)} (${goal.best.subject})${goal.best.reachable ? '' : ', **out of reach**'}`
      : '';
    lines.push(
      `| ${goal.goal} | ${goal.subject} | ${goal.against} | ${ratio(goal.value, goal.interval, digitsFor(goal))} | ${goal.met ? 'met' : '**not met**'} | ${best} | ${goal.note ?? ''} |`,
    );
  }
  return lines.join('\n');
}

/** A ratio, with its interval where it has one: `1.38× (1.33-1.41)`. */
function ratio(value: number, interval: Interval | undefined, digits = 2): string {
  const text = `${value.toFixed(digits)}×`;
  return interval
    ? `${text} (${interval[0].toFixed(digits)}-${interval[1].toFixed(digits)})`
    : text;
}

/** The median of the case `id` in `cases`; `undefined` when the run has no such case. */
function medianOf(cases: readonly CaseResult[], id: string): number | undefined {
  return cases.find((item) => item.id === id)?.median;
}

/**
 * The core next to the peer, per database and path: no goal, because the peer does not do
 * the same job (see the docs page), but the price of what it leaves out should be visible.
 */
export function peerTable(cases: readonly CaseResult[]): string {
  const median = (id: string) => medianOf(cases, id);
  const lines = [
    '| database | path | `guard.run` | peer, memory | peer, Redis | guard ÷ peer (memory) | guard ÷ peer (Redis) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const db of ['sqlite', 'postgres']) {
    for (const path of ['fresh', 'replay']) {
      const core = median(`${db}.core.${path}`);
      const memory = median(`${db}.peer-memory.${path}`);
      const redis = median(`${db}.peer-redis.${path}`);
      if (core === undefined || memory === undefined || redis === undefined) continue;
      lines.push(
        `| ${db} | ${path} | ${time(core)} | ${time(memory)} | ${time(redis)} | ${(core / memory).toFixed(2)}× | ${(core / redis).toFixed(2)}× |`,
      );
    }
  }
  return lines.join('\n');
}

/** What `npm run bench` prints. */
export function consoleReport(report: BenchReport): string {
  return [
    '## Goals',
    '',
    goalsTable(report.goals),
    '',
    '## In process (µs per call, sequential)',
    '',
    casesTable(report.cases),
    '',
    `## HTTP on Postgres (autocannon, ${report.settings.connections} connections)`,
    '',
    httpTable(report.http),
    '',
    '## Floors (bench/designs.ts)',
    '',
    designsTable(report.designs),
    '',
    '## Next to the peer (@node-idempotency/core)',
    '',
    peerTable(report.cases),
    '',
  ].join('\n');
}

/**
 * Why the Postgres verdicts move with the host's round trip: what the library adds there is
 * mostly CPU, while the baseline is mostly round trips. The same tree met 3 of the goals on a
 * host whose round trip took 50 µs and 8 on one whose round trip took 106 µs (2026-12-04).
 */
function roundTripNote(report: BenchReport): string {
  const roundTrip = medianOf(report.cases, 'postgres.floor.round-trip');
  if (roundTrip === undefined) return '';
  return `
- On Postgres most of what the library adds is CPU time in this process, while most of the
  unguarded mutation's time is round trips to the server, and the two do not scale together:
  on a host where a round trip costs less, the same code's Postgres cost ratios are higher
  (further from their goals). This run's round trip (\`floor.round-trip\`, a raw
  \`SELECT 1\` over loopback): ${time(roundTrip)}.${commitNote(report)}`;
}

/**
 * The write in the denominator of every Postgres fresh and replay goal, beside the round trip:
 * two runs of the same code on one host, at the same round trip (51.5 and 51.4 µs), timed
 * `floor.insert-tx` at 386 and 544 µs (stop 32), and the core's Postgres replay went from
 * 0.52× to 0.39×.
 */
function commitNote(report: BenchReport): string {
  const inTransaction = medianOf(report.cases, 'postgres.floor.insert-tx');
  if (inTransaction === undefined) return '';
  return `
- The denominator of every Postgres fresh and replay goal holds an unguarded insert in a
  transaction of its own: the server's work for the write, and its flush to disk at commit.
  On one shared machine, at the same round trip, that has cost more in some runs than in
  others, and the Postgres ratios moved with it. This run's insert in a transaction, alone
  (\`floor.insert-tx\`): ${time(inTransaction)}.`;
}

/** docs/benchmarks.md: regenerated by every full run. */
export function docsPage(report: BenchReport): string {
  const met = report.goals.filter((goal) => goal.met).length;
  const list = (record: Record<string, string | number>) =>
    Object.entries(record)
      .map(([name, value]) => `- ${name}: ${value}`)
      .join('\n');
  return `# Benchmarks

What the guard costs per request, measured by \`npm run bench\` (bench/run.ts). This page, the
chart and \`bench/results/latest.json\` are generated by the last full run; do not edit them by
hand. Last run: ${report.generatedAt}, ${report.seconds.toFixed(0)} s.

![distance to each goal (the line at 1 is the goal; shorter is better)](./benchmark-ratios.svg)

**${met} of ${report.goals.length} goal checks met in this run.**

## How it is measured

- Command: \`${report.command}\` (\`npm run bench -- --quick\` is a short smoke run that writes
  only \`bench/results/quick.json\`).
- In process, one call at a time: GraphQL through \`yoga.fetch\`, tRPC through
  \`fetchRequestHandler\`, and no framework at all. Every case of a database runs in the same
  ${report.settings.rounds} rounds, one ${report.settings.batchMs} ms batch per case per round, in
  a rotating order, after ${report.settings.warmup} warm-up calls, so that noise on a shared
  machine hits the guarded and the unguarded cases alike. No GC is forced: a forced full GC
  leaves the process about twice as slow for half a second (bench/measure.ts), so the runs
  before 2026-12-03, which forced one before every round, timed mostly that state.
  Times are \`process.hrtime.bigint()\` per call; median and p99 over all samples.
- The business operation is one \`INSERT\` of one row through Drizzle: on the database when
  unguarded (autocommit, and as \`unguarded-tx\` in a Drizzle transaction of its own),
  through the guard's transaction handle when guarded. SQLite is a file in WAL mode (as the
  store configures it); Postgres is a real server over loopback TCP (node-postgres Pool),
  whose commits wait for the WAL flush (\`synchronous_commit = on\`).
- HTTP: \`bench/server.ts\` (node:http + Yoga + the library on Postgres, pool of 10 per
  process), as 1 and as 2 processes behind node:cluster, loaded by autocannon with
  ${report.settings.connections} connections on the same machine. Unguarded, distinct keys,
  10% duplicate keys (every 10th request reuses the key sent 128 requests earlier), and two
  servers without the library whose resolver sends a design's statements (bench/server.ts,
  the \`design-*\` rows: what that design leaves at most) alternate in
  ${report.settings.httpRounds} rounds of ${report.settings.httpSeconds} s after a warm-up; p99
  is over every response of those rounds. "Throughput vs. unguarded" is guarded requests/s ÷
  unguarded requests/s.
- The machine is shared with other engineers' test suites; numbers move between runs. Compare
  ratios from one run, not absolute times across runs.${roundTripNote(report)}

## Goals

Each goal is a ratio of two cases (or two throughputs) from the same run:

- SQLite: a fresh guarded mutation costs at most 1.25× the unguarded one, through the core
  (\`guard.run\` against the bare insert) and through both adapters; a replay at most 0.7×
  through both adapters.
- Postgres: a fresh guarded mutation costs at most 1.35× the unguarded mutation in a Drizzle
  transaction of its own, and a replay at most 0.4× it, through the core and both adapters.
  The guarded mutation's result commits atomically with its business write, so the
  unguarded mutation that gives the same guarantee for its own write is the one in a
  transaction.
- HTTP on Postgres, ${report.settings.connections} connections, 1 and 2 processes: guarded
  throughput at least 0.7× the unguarded, with distinct keys and with 10% duplicates; the
  p99s stand beside it.
- Pass-through (queries on a server with the library, SPEC S17): at most 1.02×.

"Best possible (same run)" is what no guarded call could beat, measured in the same rounds
as the guarded call and against the same baseline. Where it is out of reach, so is the goal,
whatever the library's own code costs.

The in-process ratios here are paired by round (\`bench/interval.ts\`). The cases of a group
run in the same rounds, so each round gives one ratio of the two cases' batch medians, and a
burst of noise that slows a whole round lands on both sides of it. A goal's ratio is the
median of those per-round ratios; the cases table further down divides the cases' overall
medians instead, so the two can differ where the noise was uneven. In brackets: the middle
95% of the same median over rounds drawn again with replacement, which is how far the ratio
moves with the machine's noise. Where the brackets straddle a limit, another run could land
on either side of it. A floor is called out of reach only when its brackets lie wholly past
the limit.

- A replay through an adapter: the replay answered by the least adapter
  (\`replay-floor-adapter\`, bench/apps/least-replay.ts), a middleware or plugin that only
  does what any guarding one must to answer it: take the key from the header, hash the
  request once (SHA-256 over its JSON as the adapter has it, with GraphQL's variables
  coerced as S5 asks; cheaper than S5's canonical encoding), read the record, parse its
  stored result and return it with the response marked as a replay, without running the
  resolver. \`replay-floor\` is the same mutation on a server without the library whose
  resolver only reads the record, for comparison. It is not a bound: it runs the framework's
  execution of the mutation, which a replay need not (on GraphQL it can cost more than the
  least adapter's replay).
- A fresh call through an adapter: the same mutation whose resolver writes its row and a
  complete record in one transaction with the same raw statements as \`floor.design\`,
  behind the least adapter (\`fresh-floor-adapter\`). That is a middleware or plugin that
  only does what any guarding one must: take the key from the header and hash the request
  once, as the least replay does (a guard cannot know a call is fresh before it has looked
  up its key, and the record stores the request's digest), then wrap the mutation and hand
  its resolver a transaction handle in the context. On SQLite it also runs the mutation in an
  AsyncLocalStorage frame, as the store runs guarded work, so that a guarded call nested in
  it joins its transaction instead of waiting for it (SPEC S23); on Node 20 every promise
  made inside such a frame costs more. \`fresh-floor\` is the same resolver on the plain
  server, for comparison.
- The core's fresh call: a fresh design's raw statements around the same insert
  (\`floor.design\`: on SQLite "record written last", the cheapest design; on Postgres the
  shipped statements in three round trips; "Floors" below has every design, timed in rounds
  of their own).
- The core's replay (Postgres): the shipped replay's raw statements on the same record
  (\`floor.design-replay\`: BEGIN with \`_begin\`, answered after that one round trip, the
  ROLLBACK after the answer).
- HTTP: the better of the two servers that send the cheapest designs' statements with no
  guard at all (\`design-*\`).

${goalsTable(report.goals)}

## In process

${casesTable(report.cases)}

## HTTP on Postgres

${httpTable(report.http)}

## Floors: what each design costs before any client code

\`bench/designs.ts\` (also \`npm run bench:designs\` on its own) sends each design's statements
with the raw driver and nothing between them: no guard, no fingerprint, no serializer, and
as few round trips as the design's protocol allows (the rows "in a Drizzle transaction" send
the same statements through Drizzle's \`db.transaction\`, still with no guard and no store
code). The business write is the baseline's own, one row through Drizzle's query builder (on
Postgres on a Drizzle transaction object over the design's connection, as the store hands
the work one), so a design's "× baseline" is its floor in the goal's terms; the "no Drizzle"
baseline shows what the builder itself costs. What a design costs over the baseline here is
the database's own work and the round trips it needs; the library can only add to it. Each
database's rows are one interleaved group, against the same unguarded baseline as the goals.

${designsTable(report.designs)}

How to read it against the goals:

- **Postgres as shipped: one transaction.** The store claims the key inside the business
  transaction (S11's lock model): \`BEGIN\`, \`_begin\` (the request's and the key's
  transaction-scoped advisory locks, then the record), a savepoint, the work, \`_finish\`
  (the complete record, inserted once against the primary key, which decides), \`COMMIT\`.
  Each statement of its own is one call of a PL/pgSQL function whose plan the server keeps.
  On a node-postgres Pool the store sends them in three round trips, as many as the
  baseline: \`BEGIN\` with \`_begin\` and the savepoint, the work, \`_finish\` with
  \`COMMIT\` ("three round trips" row: the floor of the shipped design). postgres.js
  pipelines the opening statements; PGlite sends one per round trip ("a round trip per
  statement" row, the most that costs).
- **What the shipped design adds to the baseline** is the server's work on the locks, the
  record's read and its one \`INSERT\`; no extra round trip, no second commit, no WAL flush of
  its own. \`guard.run\` ("core.fresh" in the goals) adds the library's code to that floor:
  the fingerprint, the store's bookkeeping, the Drizzle transaction object it hands the work.
- **The claim's first round trip** (the "first round trip" rows, each answered after it):
  against \`BEGIN\` alone, it shows what the claim adds to the round trip the baseline makes
  anyway. When these rows were added (2026-12-04), \`BEGIN\` with \`_begin\` and the
  savepoint cost what \`BEGIN\` with a plain primary-key \`SELECT\` of the record costs: a
  second statement with a row to answer costs about as much as the function's locks and read
  together, so the claim sits at the floor of any design that reads the record in its
  transaction.
- **The lease** (the rows named so: what 0.2.0-dev shipped, and what the store still does for
  stores without the one-transaction claim) cannot meet the Postgres fresh goal, however its
  statements are sent: its claim commits on its own before the business transaction, and
  the business transaction locks the row again. Four round trips keep a replay at one; three
  begin a transaction before the claim's answer is known, so every replay rolls one back.
- **Inside Drizzle's \`db.transaction\` no design meets the fresh goal.** Drizzle sends
  \`BEGIN\` and \`COMMIT\` as statements of their own (the "in a Drizzle transaction" rows, no
  guard and no store code in them). The store sends \`BEGIN\` and \`COMMIT\` itself on a
  node-postgres Pool, each merged with one of its own statements, and hands the work a
  Drizzle transaction object over that connection.
- **The claim row inside** (the lease claim's \`INSERT\` as the business transaction's first
  statement, merged into three round trips) was the other one-transaction design measured
  before choosing: it writes the record twice (the in-flight row, then the completion's
  \`UPDATE\`) where the shipped design writes it once, and it needs the same advisory locks as
  a hint to answer a duplicate in flight, which cannot see an uncommitted row.
- **Duplicates in flight** ("duplicate in flight" row, against an original held open): the
  duplicate's \`_begin\` finds the request's lock taken and answers after one round trip (409).
  A different request in flight waits up to 25 ms for the key's lock before its 422: a
  transaction that is ending releases its locks one by one, and only the wait tells it apart
  from one that still runs.
- **Replays**: as shipped, \`BEGIN\` with \`_begin\`, which finds the record; the answer comes
  after that round trip, and the \`ROLLBACK\` of the empty transaction runs after it. Its floor
  is that first query; the lease's claim function (one autocommit statement) and a primary-key
  \`SELECT\` are below it. The core's replay is checked against it in the goals table
  (\`floor.design-replay\`, timed in the same rounds). Through the adapters, the
  \`replay-floor-adapter\` rows (the least adapter answering the replay) show what the
  framework itself costs.
- **SQLite as shipped: one transaction too.** The store reads the record without queuing
  (so a replay is that one \`SELECT\`), then \`BEGIN IMMEDIATE\`, reads it again under the
  write lock, runs the work in a savepoint, writes the complete record once and commits: one
  commit per fresh call where the lease model ("lease: two commits") made two. Every SQLite
  design writes the business row through Drizzle, as the baseline does, so its "× baseline"
  is its floor in the goal's terms. What the record costs is mostly its write: three more
  b-trees (the table, its primary key, the expiry index) dirtied per commit, each a page in
  the WAL and, at the next checkpoint, in the file. "Record written last" is the least any
  design that stores the result with the business write can do; the store's own code (its
  queue, the in-process ledger, the transaction handle it hands the work) and the guard's come
  on top ("floor.store" and "core.fresh" in the goals table). Through an adapter the work is
  the framework's own resolver chain, and it runs in an AsyncLocalStorage context, so that a
  guarded call nested in it joins its transaction instead of waiting for it (SPEC S23). On
  Node 20 and 22 such a context makes every promise slower while it is open: \`npx tsx
  bench/profile.ts unguarded\` times the unguarded mutation inside one
  (\`unguarded-in-context\`) beside it, in CPU time. \`npx tsx bench/profile.ts guarded\`
  times the guarded mutation over a store that keeps nothing (\`guarded-no-store\`, with and
  without that context): what the adapter and the guard cost before any store does anything.

## Next to the peer

@node-idempotency/core is the closest package on npm, measured on its in-memory and its
Redis storage guarding the same insert (\`onRequest\`, the insert, \`onResponse\`). It is
not held to a goal, because it does not do the same job; what its lower numbers leave out:

- **No transaction with the business write.** Its record lives in Redis or in the process's
  memory, never in the database the mutation writes to. The insert commits on its own and
  \`onResponse\` stores the answer afterwards: a crash, or a failed \`onResponse\`, between
  the two leaves the write committed and the key "in progress".
- **No lease, no takeover.** An "in progress" key answers every retry with
  \`REQUEST_IN_PROGRESS\` until the storage's TTL runs out (24 hours by default; this bench
  sets 10 minutes), and then the next retry runs the mutation again.
- **No fenced completion.** \`onResponse\` is an unconditional write of the key: nothing
  checks that the request storing the answer still holds the key.
- **No release on failure.** The core has no call that frees a key after the work failed (its
  storages have no delete), so a failed request cannot roll back and let a retry run afresh.
- **A weaker fingerprint and no scope.** The fingerprint is a hash of \`JSON.stringify(body)\`:
  property order counts, Dates turn into strings, BigInt throws, Map and Set encode as \`{}\`.
  Keys are unique per prefix, method and path, not per tenant.
- **The memory storage is one process's.** Two processes never see each other's keys; only
  Redis coordinates them.

So its memory replay is a \`Map\` lookup and its fresh path one Redis \`SET NX\` plus one
\`SET\`, where the guard reads and writes the database the mutation writes to.

${peerTable(report.cases)}

## Machine

${list(report.machine)}

## Versions

${list(report.versions)}
`;
}
