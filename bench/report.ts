/**
 * docs/benchmarks.md from bench/results/latest.json (`docsPage`), and what `npm run bench`
 * prints. The page ends with the archived design research (bench/design-research.md), as it is.
 */
import { readFileSync } from 'node:fs';
import type { Count } from './count.js';
import type { CountRow } from './counts.js';
import { type PairedRatio, pairedRatio } from './measure.js';
import type { BenchReport, CaseResult, RunInfo } from './results.js';

const DATABASES = ['sqlite', 'postgres'] as const;
const SURFACES = { core: '`guard.run`', graphql: 'GraphQL (Yoga)', trpc: 'tRPC' } as const;

/**
 * What a guarded call is held against: on SQLite the mutation as an app without the library
 * writes it (autocommit); on Postgres the same in a transaction of its own, the unguarded
 * mutation that gives its write the guarantee the guard gives the result (it commits with it).
 */
const BASELINE = { sqlite: 'unguarded', postgres: 'unguarded-tx' } as const;

/** The project's goals: at most this × the baseline (none for the core's replay on SQLite). */
const GOALS: Record<string, number | undefined> = {
  'sqlite.fresh': 1.25,
  'sqlite.replay': 0.7,
  'postgres.fresh': 1.35,
  'postgres.replay': 0.4,
  'pass-through': 1.02,
};

export function time(us: number): string {
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  return `${us >= 100 ? us.toFixed(0) : us.toFixed(1)} µs`;
}

function table(head: string[], rows: string[][]): string {
  const align = head.map((_, i) => (i === 0 ? '---' : '---:'));
  return [head, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** Reads a run's cases: medians, and ratios paired by round with their goal. */
function reader(cases: readonly CaseResult[]) {
  const find = (id: string) => {
    const found = cases.find((item) => item.id === id);
    if (!found) throw new Error(`report: the run has no case ${id}`);
    return found;
  };
  const text = ({ value, interval: [low, high] }: PairedRatio, digits = 2) =>
    `${value.toFixed(digits)}× (${low.toFixed(digits)}-${high.toFixed(digits)})`;
  return {
    median: (id: string) => time(find(id).median),
    /** `subject ÷ against` with its interval, and whether it meets `goal`: `1.45× (1.41-1.50), ≤ 1.35×: met`. */
    ratio(subject: string, against: string, goal?: number) {
      const ratio = pairedRatio(find(subject).rounds, find(against).rounds)!;
      if (goal === undefined) return text(ratio);
      const met = ratio.value <= goal;
      // Three decimals where two would round the ratio onto the other side of its goal.
      const digits = Number(ratio.value.toFixed(2)) <= goal === met ? 2 : 3;
      return `${text(ratio, digits)}, ≤ ${goal}×: ${met ? 'met' : '**not met**'}`;
    },
  };
}

export function costTable(cases: readonly CaseResult[]): string {
  const { median, ratio } = reader(cases);
  const rows = DATABASES.flatMap((db) =>
    Object.entries(SURFACES).map(([surface, label]) => {
      const id = (name: string) => `${db}.${surface}.${name}`;
      const goal = (path: string) =>
        db === 'sqlite' && surface === 'core' && path === 'replay'
          ? undefined
          : GOALS[`${db}.${path}`];
      return [
        `${db}, ${label}`,
        ...['unguarded', 'unguarded-tx', 'fresh', 'replay'].map((name) => median(id(name))),
        ratio(id('fresh'), id(BASELINE[db]), goal('fresh')),
        ratio(id('replay'), id(BASELINE[db]), goal('replay')),
      ];
    }),
  );
  const head = ['database, surface', 'unguarded', 'unguarded, in a transaction', 'fresh', 'replay'];
  return table([...head, 'fresh ÷ baseline', 'replay ÷ baseline'], rows);
}

export function passThroughTable(cases: readonly CaseResult[]): string {
  const { median, ratio } = reader(cases);
  const rows = DATABASES.flatMap((db) =>
    (['graphql', 'trpc'] as const).map((surface) => {
      const [plain, plugin] = [`${db}.${surface}.query-plain`, `${db}.${surface}.query-plugin`];
      return [
        `${db}, ${SURFACES[surface]}`,
        median(plain),
        median(plugin),
        ratio(plugin, plain, GOALS['pass-through']),
      ];
    }),
  );
  return table(['database, surface', 'query without the library', 'with it', 'ratio'], rows);
}

function counted(count: Count | undefined): string {
  if (!count) return 'n/a';
  const both = `${count.roundTrips} / ${count.statements}`;
  return count.answeredAfter < count.roundTrips
    ? `${both} (answered after ${count.answeredAfter})`
    : both;
}

export function countsTable(rows: readonly CountRow[]): string {
  const head = ['store, driver', 'unguarded: the insert in a transaction', 'fresh', 'replay'];
  return table(
    [...head, '409, same process', '409, another process'],
    rows.map((row) => [
      `${row.store === 'sqlite' ? 'SQLite' : 'Postgres'}, ${row.driver}`,
      ...[row.unguarded, row.fresh, row.replay, row.inFlight, row.inFlightElsewhere].map(counted),
    ]),
  );
}

/** The guard next to the peer, per database and path (no goal: it does not do the same job). */
export function peerTable(cases: readonly CaseResult[]): string {
  const median = (id: string) => cases.find((item) => item.id === id)!.median;
  const rows = DATABASES.flatMap((db) =>
    ['fresh', 'replay'].map((path) => {
      const [core, memory, redis] = ['core', 'peer-memory', 'peer-redis'].map((of) =>
        median(`${db}.${of}.${path}`),
      ) as [number, number, number];
      const times = [core, memory, redis].map(time);
      return [
        `${db}, ${path}`,
        ...times,
        `${(core / memory).toFixed(2)}×`,
        `${(core / redis).toFixed(2)}×`,
      ];
    }),
  );
  const head = ['database, path', '`guard.run`', 'peer, memory', 'peer, Redis'];
  return table([...head, 'guard ÷ peer (memory)', 'guard ÷ peer (Redis)'], rows);
}

/** What `npm run bench` prints. */
export function consoleReport({ timed, counted: counts }: BenchReport): string {
  const { cases } = timed;
  return [
    costTable(cases),
    passThroughTable(cases),
    countsTable(counts.rows),
    peerTable(cases),
  ].join('\n\n');
}

const list = (record: Record<string, string | number>) =>
  Object.entries(record)
    .map(([name, value]) => `- ${name}: ${value}`)
    .join('\n');
const when = (run: RunInfo) =>
  `${run.generatedAt}, \`${run.command}\`, ${run.seconds.toFixed(0)} s`;

/** docs/benchmarks.md. */
export function docsPage({ timed, counted: counts }: BenchReport): string {
  const research = readFileSync(new URL('./design-research.md', import.meta.url), 'utf8');
  const sameRun = timed.generatedAt === counts.generatedAt;
  const { rounds, batchMs, warmup } = timed.settings;
  return `# Benchmarks

What a guarded mutation costs next to the same mutation without the library, on each store
and surface, and next to the closest peer on npm: generated by \`npm run bench\`
(bench/run.ts) from \`bench/results/latest.json\`; do not edit by hand.

- Timed figures: ${sameRun ? 'the run of' : 'the last full run,'} ${when(timed)}.
- Counted figures: ${sameRun ? 'the same run.' : `${when(counts)}; \`--counts\` renews only them.`}

## Round trips and statements (counted)

Counted, not timed, so they do not move with the machine (bench/count.ts), and pinned by
test/bench/counts.test.ts. Each cell is **round trips / statements** of one call through
\`guard.run\`, counted after a first call of the same kind (the adapters send no statement
of their own):

- Postgres over TCP (a node-postgres Pool, postgres.js): a proxy in the bench reads the wire
  protocol. A statement is one statement of a simple query, or one Execute; a round trip is
  a request that waits for the server (a simple query or a Sync) sent while its connection
  has nothing unanswered, so a multi-statement query, or a request pipelined behind
  another, adds none.
- PGlite runs in the process, with no network: a round trip is one request into the engine
  (one \`query\` or \`exec\`), counted the same way.
- SQLite (better-sqlite3) runs in the process: 0 round trips. A statement is one prepared
  statement run, or one statement of an \`exec\`.
- "Answered after": the call had its answer after that many round trips; the \`ROLLBACK\` of
  a replay's empty transaction goes after it.
- 409: a duplicate while the first call's work runs. The same process answers it from what
  the store holds, without the database; another process (here a second client of the same
  server) asks the server, which finds the key's lock taken.

${countsTable(counts.rows)}

## Guarded next to unguarded (timed)

In process, one call at a time: GraphQL through \`yoga.fetch\`, tRPC through
\`fetchRequestHandler\`, the core (\`guard.run\`) with no framework. The business operation is
one \`INSERT\` of one row through Drizzle: autocommit or in a Drizzle transaction of its own
unguarded, on the guard's transaction handle guarded. SQLite is a file in WAL mode; Postgres
a real server over loopback TCP through a node-postgres Pool. Every case of a database runs
in the same ${rounds} rounds, one ${batchMs} ms batch per case per round in a rotating
order, after ${warmup} warm-up calls, so that the shared machine's noise lands on all of them
alike. Times are medians per call over all samples.

Fresh is a new key, replay a key whose answer is stored. Each ratio is paired by round
(bench/measure.ts): the median of the rounds' ratios, and in brackets the middle 95% of it
over the rounds drawn again with replacement (how far the noise moves it). The baseline is
the unguarded mutation, autocommit, on SQLite, and in a transaction of its own on Postgres:
the guarded result commits with the business write, and on Postgres the unguarded mutation
that gives its write that guarantee is the one in a transaction. After each ratio, the
project's goal.

${costTable(timed.cases)}

A query on a server with the library installed (pass-through, SPEC S17):

${passThroughTable(timed.cases)}

On Postgres most of what the guard adds is CPU time in the app's process, while most of
the unguarded mutation's time is round trips and the server's commit: the faster the
loopback and the commit, the higher the same code's ratios. The unguarded insert in a
transaction on Postgres (no framework): ${reader(timed.cases).median('postgres.core.unguarded-tx')} in this run, 580 µs in the archived
run of 2026-12-04 below. Compare ratios within one run, not absolute times across runs: the
machine is shared with other engineers' test suites.

## Next to the peer (timed)

@node-idempotency/core is the closest package on npm, measured on its in-memory and its
Redis storage guarding the same insert (\`onRequest\`, the insert, \`onResponse\`) in the
same rounds. It is held to no goal, because it does not do the same job:

- **No transaction with the business write.** Its record lives in Redis or in memory. The
  insert commits on its own and \`onResponse\` stores the answer afterwards: a crash between
  the two leaves the write committed and the key "in progress" until its TTL (24 hours by
  default; 10 minutes here), after which a retry runs the mutation again.
- **No fenced completion, no release on failure**: \`onResponse\` writes the key
  unconditionally, and nothing frees a key after the work failed.
- **A weaker fingerprint and no scope**: a hash of \`JSON.stringify(body)\` (property order
  counts, Dates turn into strings, BigInt throws, Map and Set encode as \`{}\`), keys unique
  per prefix, method and path, not per tenant; the memory storage is one process's.

So its memory replay is a \`Map\` lookup and its fresh path one Redis \`SET NX\` plus one
\`SET\`, where the guard reads and writes the database the mutation writes to.

${peerTable(timed.cases)}

## Every timed case

${table(
  ['case', 'median', 'p99', 'samples'],
  timed.cases.map((item) => [item.id, time(item.median), time(item.p99), `${item.samples}`]),
)}

## Machine and versions

${list(timed.machine)}
${list(timed.versions)}
${sameRun ? '' : `\nThe counted run:\n\n${list(counts.machine)}\n${list(counts.versions)}\n`}
${research}`;
}
