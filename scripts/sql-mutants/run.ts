/**
 * `npm run mutate:sql` (issue 34): plants each bug of mutants.ts in the SQL the Postgres
 * store runs, one at a time, and runs the Postgres tests against it; a mutant that no test
 * catches is a rule the suite does not check.
 *
 * Nothing committed is touched: the tracked (and new, unignored) files are copied once to a
 * temporary directory beside a link to node_modules, and each mutant is written into that
 * copy's migration or source file and taken out again after its run. The tests then create the
 * mutated functions the way users get them, through migratePostgres, each on tables of its
 * own, so other runs on the same database never see them.
 *
 * Each mutant runs the stages below in order and stops at the first failing test (vitest's
 * bail): first the store conformance suite on node-postgres (PGlite runs the same SQL and
 * takes long to boot), then, for a mutant that got through it, the Postgres tests that call the
 * functions more directly. An unmutated baseline runs first and must pass.
 *
 *   npm run mutate:sql                       every mutant
 *   npm run mutate:sql -- finish-keeps-old-expiry purge-unbounded   some, by id
 *   npm run mutate:sql -- --list             the mutants, checked against the SQL, not run
 *   npm run mutate:sql -- --no-baseline      skip the unmutated run
 *
 * Needs the real Postgres (TEST_DATABASE_URL, by default postgres://postgres@127.0.0.1:5432/test).
 * Writes reports/sql-mutants.json and prints a table.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { BREAKPOINT } from '../../src/store/migrations.js';
import { DEFAULT_TABLE_NAME } from '../../src/store/table-name.js';
import { SQL_MUTANTS, type SqlMutant } from './mutants.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const MIGRATIONS = 'drizzle/postgres';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** A run past this is stopped and counted as caught (a hang is a failure a user would see). */
const RUN_LIMIT_MS = 15 * 60_000;

interface Stage {
  name: string;
  files: string[];
  /** vitest's -t: which tests of those files run. */
  pattern?: string;
}

const STAGES: Stage[] = [
  {
    name: 'conformance',
    files: ['test/conformance/postgres.test.ts'],
    pattern: '^node-postgres Pool ',
  },
  {
    name: 'postgres',
    files: [
      'test/postgres/one-transaction.test.ts',
      'test/postgres/request-lock.test.ts',
      'test/postgres/claim.test.ts',
      'test/postgres/store.test.ts',
      'test/postgres/purge.test.ts',
      'test/postgres/isolation.test.ts',
    ],
  },
];

type Verdict =
  | { status: 'killed'; stage: string; by: string[] }
  | { status: 'error'; stage: string; message: string }
  | { status: 'timeout'; stage: string }
  | { status: 'survived' };

interface Outcome {
  mutant: SqlMutant;
  verdict: Verdict;
  seconds: number;
}

/** Where a mutant's text lives: a file of the copy, and the part of it the search may touch. */
interface Site {
  file: string;
  start: number;
  end: number;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const listOnly = args.includes('--list');
  const baseline = !args.includes('--no-baseline');
  const ids = args.filter((arg) => !arg.startsWith('--'));
  const unknown = ids.filter((id) => !SQL_MUTANTS.some((mutant) => mutant.id === id));
  if (unknown.length > 0) throw new Error(`No such mutant: ${unknown.join(', ')}.`);
  const chosen = ids.length > 0 ? SQL_MUTANTS.filter((m) => ids.includes(m.id)) : SQL_MUTANTS;

  // Every search string is checked before anything runs: a mutant whose text moved fails here.
  for (const mutant of chosen) mutate(ROOT, mutant);
  if (listOnly) {
    for (const m of chosen) console.log(`${m.id.padEnd(36)} ${m.rules.padEnd(9)} ${m.bug}`);
    console.log(`\n${chosen.length} mutants; every search string found once.`);
    return;
  }
  await assertRealPostgres();

  const copy = copyProject();
  console.log(`Copied the project to ${copy}`);
  const outcomes: Outcome[] = [];
  try {
    if (baseline) {
      const started = Date.now();
      const verdict = await runStages(copy);
      const seconds = Math.round((Date.now() - started) / 1000);
      if (verdict.status !== 'survived') {
        throw new Error(
          `The unmutated baseline fails (${JSON.stringify(verdict)}); fix that before mutating.`,
        );
      }
      console.log(`baseline: every stage passes (${seconds} s)`);
    }
    for (const mutant of chosen) {
      const { file, original, mutated } = mutate(copy, mutant);
      writeFileSync(file, mutated);
      const started = Date.now();
      try {
        const verdict = await runStages(copy);
        const seconds = Math.round((Date.now() - started) / 1000);
        outcomes.push({ mutant, verdict, seconds });
        console.log(`${mutant.id}: ${describe(verdict)} (${seconds} s)`);
      } finally {
        writeFileSync(file, original);
      }
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  report(outcomes);
}

/** The mutant applied to the files under `root`: which file, as it was and as mutated. */
function mutate(root: string, mutant: SqlMutant) {
  const site = siteOf(root, mutant);
  const original = readFileSync(site.file, 'utf8');
  let region = original.slice(site.start, site.end);
  for (const edit of [mutant, ...(mutant.also ?? [])]) {
    const pattern = new RegExp(
      edit.search
        .trim()
        .split(/\s+/)
        .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('\\s+'),
      'g',
    );
    const found = [...region.matchAll(pattern)];
    if (found.length !== 1) {
      throw new Error(
        `Mutant ${mutant.id}: its search text occurs ${found.length} times in ${where(mutant)}, not once. Update scripts/sql-mutants/mutants.ts.\nSearched for:\n${edit.search}`,
      );
    }
    const at = found[0]!.index;
    region = region.slice(0, at) + edit.replace + region.slice(at + found[0]![0].length);
  }
  const mutated = original.slice(0, site.start) + region + original.slice(site.end);
  return { file: site.file, original, mutated };
}

/**
 * A function's last definition in the shipped migrations (the one a migrated table ends up
 * with), in drizzle-kit's journal order; or a whole source file.
 */
function siteOf(root: string, mutant: SqlMutant): Site {
  if ('file' in mutant.where) {
    const file = join(root, mutant.where.file);
    return { file, start: 0, end: readFileSync(file, 'utf8').length };
  }
  const name = `"${DEFAULT_TABLE_NAME}_${mutant.where.fn}"`;
  const definition = new RegExp(`CREATE\\s+(OR\\s+REPLACE\\s+)?FUNCTION\\s+${name}\\s*\\(`, 'i');
  const journal = JSON.parse(
    readFileSync(join(root, MIGRATIONS, 'meta/_journal.json'), 'utf8'),
  ) as { entries: { idx: number; tag: string }[] };
  let last: Site | undefined;
  for (const { tag } of [...journal.entries].sort((a, b) => a.idx - b.idx)) {
    const file = join(root, MIGRATIONS, `${tag}.sql`);
    const text = readFileSync(file, 'utf8');
    let start = 0;
    for (const statement of text.split(BREAKPOINT)) {
      const end = start + statement.length;
      if (definition.test(statement)) last = { file, start, end };
      start = end + BREAKPOINT.length;
    }
  }
  if (!last) throw new Error(`Mutant ${mutant.id}: no migration defines ${name}.`);
  return last;
}

function where(mutant: SqlMutant): string {
  return 'file' in mutant.where
    ? mutant.where.file
    : `the last definition of "${DEFAULT_TABLE_NAME}_${mutant.where.fn}"`;
}

async function assertRealPostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`npm run mutate:sql needs the real Postgres at ${DATABASE_URL}: ${error}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The tracked and new (unignored) files, copied; node_modules linked. */
function copyProject(): string {
  const copy = mkdtempSync(join(tmpdir(), 'mutation-guard-sql-mutants-'));
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  for (const path of listed.split('\0')) {
    if (!path || !existsSync(join(ROOT, path))) continue;
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    copyFileSync(join(ROOT, path), join(copy, path));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return copy;
}

async function runStages(copy: string): Promise<Verdict> {
  for (const stage of STAGES) {
    const verdict = await runStage(copy, stage);
    if (verdict.status !== 'survived') return verdict;
  }
  return { status: 'survived' };
}

interface VitestJson {
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string }[];
  }[];
  numPassedTests: number;
}

async function runStage(copy: string, stage: Stage): Promise<Verdict> {
  const output = join(copy, 'sql-mutants-result.json');
  rmSync(output, { force: true });
  const args = [
    join(copy, 'node_modules/vitest/vitest.mjs'),
    'run',
    ...stage.files,
    ...(stage.pattern ? ['-t', stage.pattern] : []),
    '--bail=1',
    '--maxWorkers=1',
    '--reporter=json',
    `--outputFile=${output}`,
  ];
  const child = spawn(process.execPath, args, { cwd: copy, stdio: 'ignore', detached: true });
  const timedOut = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
      resolve(true);
    }, RUN_LIMIT_MS);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (timedOut) return { status: 'timeout', stage: stage.name };
  if (!existsSync(output)) {
    return { status: 'error', stage: stage.name, message: 'vitest wrote no report' };
  }
  const result = JSON.parse(readFileSync(output, 'utf8')) as VitestJson;
  const failed = result.testResults.flatMap((file) =>
    file.assertionResults.filter((test) => test.status === 'failed').map((test) => test.fullName),
  );
  if (failed.length > 0) return { status: 'killed', stage: stage.name, by: failed };
  const broken = result.testResults.filter((file) => file.status === 'failed');
  if (broken.length > 0) {
    const message = broken.map((file) => file.message ?? file.name).join('\n');
    return { status: 'error', stage: stage.name, message: message.slice(0, 500) };
  }
  if (result.numPassedTests === 0) {
    return { status: 'error', stage: stage.name, message: 'no test ran' };
  }
  return { status: 'survived' };
}

function describe(verdict: Verdict): string {
  switch (verdict.status) {
    case 'killed':
      return `killed in ${verdict.stage} by "${verdict.by[0]}"`;
    case 'error':
      return `killed in ${verdict.stage}: the suite failed outside a test (${verdict.message.split('\n')[0]})`;
    case 'timeout':
      return `killed in ${verdict.stage}: the run hung past ${RUN_LIMIT_MS / 60_000} minutes`;
    case 'survived':
      return 'SURVIVED';
  }
}

function report(outcomes: Outcome[]): void {
  const survived = outcomes.filter((o) => o.verdict.status === 'survived');
  console.log('\n| mutant | rules | result | s |\n| --- | --- | --- | --- |');
  for (const { mutant, verdict, seconds } of outcomes) {
    const note = verdict.status === 'survived' && mutant.untestable ? `: ${mutant.untestable}` : '';
    console.log(`| ${mutant.id} | ${mutant.rules} | ${describe(verdict)}${note} | ${seconds} |`);
  }
  const unexpected = survived.filter((o) => !o.mutant.untestable);
  console.log(
    `\n${outcomes.length - survived.length} of ${outcomes.length} caught; ${survived.length} survived (${unexpected.length} that a test could catch).`,
  );
  mkdirSync(join(ROOT, 'reports'), { recursive: true });
  writeFileSync(
    join(ROOT, 'reports/sql-mutants.json'),
    `${JSON.stringify(
      outcomes.map(({ mutant, verdict, seconds }) => ({
        id: mutant.id,
        rules: mutant.rules,
        bug: mutant.bug,
        verdict,
        seconds,
      })),
      null,
      2,
    )}\n`,
  );
  if (unexpected.length > 0) process.exitCode = 1;
}

await main();
