/**
 * `npm run bench`: measures what the guard costs and publishes it. Runs the
 * in-process cases on SQLite and then on Postgres, the HTTP load on Postgres, checks the
 * goals, prints the tables, writes bench/results/latest.json, docs/benchmarks.md and
 * docs/benchmark-ratios.svg.
 *
 * `npm run bench -- --quick`: a short smoke run; writes bench/results/quick.json only.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { baselineOf } from './baselines.js';
import { floorCases } from './cases/floor.js';
import { httpCases } from './cases/http.js';
import { graphqlSurface, surfaceCases, trpcSurface } from './cases/surfaces.js';
import { openPostgresBench } from './db/postgres.js';
import { openSqliteBench } from './db/sqlite.js';
import type { BenchDb } from './db/types.js';
import { measureDesigns } from './designs.js';
import { machine, versions } from './env.js';
import { checkGoals } from './goals.js';
import { type GroupOptions, measureGroup } from './measure.js';
import { consoleReport, docsPage } from './report.js';
import type { BenchReport, CaseResult, HttpCaseResult } from './results.js';
import { ratiosSvg } from './svg.js';

const quick = process.argv.includes('--quick');

/**
 * Sized so that a full run takes about 4 minutes on a busy 2-core machine. Sixty rounds: the
 * goals' intervals come from the rounds (interval.ts), and with thirty a Postgres fresh ratio's
 * interval spanned ±5-8% on the shared machine, wider than most goals' distance to their limit.
 */
const inProcess: GroupOptions = quick
  ? { rounds: 3, batchMs: 15, warmup: 10 }
  : { rounds: 60, batchMs: 35, warmup: 50 };
const http = quick
  ? { processes: [1, 2], connections: 64, rounds: 1, seconds: 1, warmupSeconds: 1 }
  : { processes: [1, 2], connections: 64, rounds: 2, seconds: 4, warmupSeconds: 2 };

async function main(): Promise<void> {
  const started = performance.now();
  const machineInfo = machine();

  const cases: CaseResult[] = [];
  for (const open of [openSqliteBench, openPostgresBench] as const) {
    const db = (await open()) as BenchDb;
    log(`${db.label}: in-process cases`);
    try {
      cases.push(...(await measureDb(db)));
    } finally {
      await db.close();
    }
  }
  log('HTTP on Postgres (autocannon)');
  const httpResults = withHttpBaselines(await httpCases(http));
  log('design floors (raw statements, no client code)');
  const designs = await measureDesigns(inProcess);

  const report: BenchReport = {
    generatedAt: new Date().toISOString(),
    command: 'npm run bench',
    quick,
    seconds: (performance.now() - started) / 1000,
    machine: { ...machineInfo, loadAverage1mAtEnd: machine().loadAverage1m ?? 0 },
    versions: await versions(),
    settings: {
      rounds: inProcess.rounds,
      batchMs: inProcess.batchMs,
      warmup: inProcess.warmup,
      connections: http.connections,
      httpRounds: http.rounds,
      httpSeconds: http.seconds,
    },
    cases,
    http: httpResults,
    goals: checkGoals(cases, httpResults),
    designs,
  };
  publish(report);
  console.log(consoleReport(report));
  log(`done in ${report.seconds.toFixed(0)} s`);
}

/** All cases of one database in one interleaved group, so their ratios share the noise. */
async function measureDb(db: BenchDb): Promise<CaseResult[]> {
  const floor = await floorCases(db);
  try {
    const timed = [
      ...floor.cases,
      ...(await surfaceCases(graphqlSurface(db))),
      ...(await surfaceCases(trpcSurface(db))),
    ];
    const stats = await measureGroup(timed, inProcess);
    const results: CaseResult[] = timed.map(({ id }) => {
      const { median, p99, samples, rounds } = stats.get(id)!;
      // To a tenth of a microsecond: enough for the intervals, and a readable latest.json.
      const perRound = rounds.map((value) => Math.round(value * 10) / 10);
      return { id: `${db.id}.${id}`, db: db.id, median, p99, samples, rounds: perRound };
    });
    for (const result of results) {
      const baseline = baselineOf(db.id, result.id.slice(db.id.length + 1));
      if (!baseline) continue;
      const against = results.find((item) => item.id === `${db.id}.${baseline}`)!;
      result.baseline = against.id;
      result.ratio = result.median / against.median;
    }
    return results;
  } finally {
    await floor.close();
  }
}

function withHttpBaselines(results: HttpCaseResult[]): HttpCaseResult[] {
  return results.map((result) => {
    if (result.variant === 'unguarded') return result;
    const baseline = results.find(
      (item) => item.processes === result.processes && item.variant === 'unguarded',
    )!;
    return {
      ...result,
      baseline: baseline.id,
      ratio: result.requestsPerSecond / baseline.requestsPerSecond,
    };
  });
}

function publish(report: BenchReport): void {
  const results = new URL('./results/', import.meta.url);
  mkdirSync(results, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (quick) {
    writeFileSync(new URL('quick.json', results), json);
    return;
  }
  writeFileSync(new URL('latest.json', results), json);
  const docs = new URL('../docs/', import.meta.url);
  mkdirSync(docs, { recursive: true });
  writeFileSync(new URL('benchmarks.md', docs), docsPage(report));
  const met = report.goals.filter((goal) => goal.met).length;
  const subtitle = `${report.generatedAt.slice(0, 10)} · ${met}/${report.goals.length} met · ${report.machine.cores} cores, ${report.machine.cpu} · Node ${report.versions.node}`;
  writeFileSync(new URL('benchmark-ratios.svg', docs), ratiosSvg(report.goals, subtitle));
}

function log(message: string): void {
  console.error(`[bench] ${message}`);
}

await main();
