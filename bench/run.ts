/**
 * `npm run bench`: what a guarded mutation costs next to the unguarded one. Times the
 * in-process cases on SQLite and on Postgres (cases.ts), counts round trips and statements
 * per driver (counts.ts), and writes bench/results/latest.json and docs/benchmarks.md
 * (report.ts).
 *
 * `npm run bench -- --quick`: a short smoke run; writes bench/results/quick.json only.
 * `npm run bench -- --counts`: counts only; keeps the timed figures of latest.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { timedCases } from './cases.js';
import { countDriver, DRIVERS } from './counts.js';
import { type BenchDb, openPostgresBench, openSqliteBench } from './db.js';
import { machine, versions } from './env.js';
import { measureGroup } from './measure.js';
import { consoleReport, docsPage } from './report.js';
import type { BenchReport, CaseResult } from './results.js';

const quick = process.argv.includes('--quick');
const countsOnly = process.argv.includes('--counts');
/** Sixty rounds: with thirty, a Postgres ratio's interval spanned ±5-8% on a shared machine. */
const settings = quick
  ? { rounds: 3, batchMs: 15, warmup: 10 }
  : { rounds: 60, batchMs: 35, warmup: 50 };
const results = new URL('./results/', import.meta.url);
const started = performance.now();

const cases: CaseResult[] = [];
for (const open of countsOnly ? [] : [openSqliteBench, openPostgresBench]) {
  const db = (await open()) as BenchDb;
  log(`${db.id}: timed cases`);
  try {
    cases.push(...(await timeDb(db)));
  } finally {
    await db.close();
  }
}
log('round trips and statements, per driver');
const rows = [];
for (const driver of DRIVERS) rows.push(await countDriver(driver));
const run = {
  generatedAt: new Date().toISOString(),
  command: `npm run bench${quick ? ' -- --quick' : countsOnly ? ' -- --counts' : ''}`,
  seconds: (performance.now() - started) / 1000,
  machine: machine(),
  versions: await versions(),
};
const report: BenchReport = {
  // `--counts` keeps the timed figures of the last full run.
  timed: countsOnly ? readLatest().timed : { ...run, settings, cases },
  counted: { ...run, rows },
};
const json = `${JSON.stringify(report, null, 2)}\n`;
if (quick) {
  writeFileSync(new URL('quick.json', results), json);
} else {
  writeFileSync(new URL('latest.json', results), json);
  writeFileSync(new URL('../docs/benchmarks.md', import.meta.url), docsPage(report));
}
console.log(consoleReport(report));
log(`done in ${run.seconds.toFixed(0)} s`);

/** All cases of one database in one interleaved group, so that their ratios share the noise. */
async function timeDb(db: BenchDb): Promise<CaseResult[]> {
  const { cases, close } = await timedCases(db);
  try {
    const stats = await measureGroup(cases, settings);
    return cases.map(({ id }) => {
      const { median, p99, samples, rounds } = stats.get(id)!;
      // To a tenth of a microsecond: enough for the intervals, and a readable latest.json.
      const perRound = rounds.map((value) => Math.round(value * 10) / 10);
      return { id: `${db.id}.${id}`, db: db.id, median, p99, samples, rounds: perRound };
    });
  } finally {
    await close();
  }
}

function readLatest(): BenchReport {
  return JSON.parse(readFileSync(new URL('latest.json', results), 'utf8')) as BenchReport;
}

function log(message: string): void {
  console.error(`[bench] ${message}`);
}
