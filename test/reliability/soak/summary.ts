/**
 * Global setup of the soak run: clears the figures file, and at the end prints every
 * figure with the machine and versions, ready to paste into docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { FIGURES_FILE, type Figure } from './figures.js';

let started = 0;

export function setup(): void {
  rmSync(FIGURES_FILE, { force: true });
  started = Date.now();
}

export function teardown(): void {
  const figures: Figure[] = existsSync(FIGURES_FILE)
    ? readFileSync(FIGURES_FILE, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Figure)
    : [];
  const lines = [
    `## Soak run ${new Date().toISOString()} (${Math.round((Date.now() - started) / 1000)} s)`,
    '',
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB`,
    `Versions: ${versions()}`,
    '',
    '| scenario | figures |',
    '| --- | --- |',
    ...figures.map(
      (f) =>
        `| ${f.scenario} | ${Object.entries(f.figures)
          .map(([name, value]) => `${name} ${value}`)
          .join(', ')} |`,
    ),
  ];
  console.log(`\n${lines.join('\n')}\n`);
}

function versions(): string {
  const pkg = (name: string) => {
    try {
      return (
        JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as {
          version: string;
        }
      ).version;
    } catch {
      return '?';
    }
  };
  let postgres = '?';
  try {
    postgres = execFileSync(
      'psql',
      ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'test', '-Atc', 'show server_version'],
      { encoding: 'utf8', timeout: 5000 },
    ).trim();
  } catch {
    // psql missing: the figure says so.
  }
  const names = [
    'drizzle-orm',
    'better-sqlite3',
    'pg',
    '@trpc/server',
    'graphql-yoga',
    'fast-check',
    'vitest',
  ];
  return [
    `node ${process.version}`,
    `postgres ${postgres}`,
    ...names.map((n) => `${n} ${pkg(n)}`),
  ].join(', ');
}
