/**
 * The docs hold together: every rule the code cites is on the contract page, code a user
 * copies cites none, tests cite rules rather than issue numbers, and every link of the README
 * and docs points at a file the published package contains (so it works from node_modules
 * and the registry page), as do the source maps.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function filesUnder(dir: string, pattern: RegExp): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir))) {
    const path = join(dir, entry);
    if (statSync(join(ROOT, path)).isDirectory()) found.push(...filesUnder(path, pattern));
    else if (pattern.test(entry)) found.push(path);
  }
  return found;
}

const RULE = /\bS(\d{1,2})\b/g;
const contract = read('docs/contract.md');
const rulesOnThePage = new Set([...contract.matchAll(/^### S(\d+) · /gm)].map((m) => Number(m[1])));

describe('the contract page', () => {
  it('has every rule S1-S29, each with its own anchor', () => {
    for (let n = 1; n <= 29; n++) {
      expect(rulesOnThePage.has(n), `S${n}`).toBe(true);
      expect(contract, `S${n}`).toContain(`<a id="s${n}"></a>`);
    }
  });

  it('holds every rule that src, test, bench, the README and the docs cite', () => {
    const citing = [
      ...filesUnder('src', /\.(ts|md)$/),
      ...filesUnder('test', /\.ts$/),
      ...filesUnder('bench', /\.ts$/),
      ...filesUnder('docs', /\.md$/),
      'README.md',
    ];
    const missing = new Set<string>();
    for (const file of citing) {
      for (const [rule, n] of read(file).matchAll(RULE)) {
        if (!rulesOnThePage.has(Number(n))) missing.add(`${rule} in ${file}`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('is linked from the README', () => {
    expect(read('README.md')).toContain('](docs/contract.md)');
  });
});

describe('citations', () => {
  it('code a user copies (examples/, the code blocks of the README and the docs) cites no rule numbers', () => {
    const pages = ['README.md', ...filesUnder('docs', /\.md$/)];
    const blocks = pages.flatMap((page) =>
      [...read(page).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!),
    );
    const examples = filesUnder('examples', /\.ts$/).map((file) => ({ file, text: read(file) }));
    const cited = [
      ...examples.filter(({ text }) => RULE.test(text) || /SPEC/.test(text)).map((e) => e.file),
      ...blocks.filter((text) => /\bS\d{1,2}\b/.test(text)).map((text) => text.slice(0, 60)),
    ];
    expect(cited).toEqual([]);
  });

  it('tests and benchmarks cite rules, not issue numbers', () => {
    const files = [...filesUnder('test', /\.ts$/), ...filesUnder('bench', /\.ts$/)];
    const issues = files.filter((file) => /\bissues? #?\d+|\(issue[ :]/i.test(read(file)));
    expect(issues).toEqual([]);
  });
});

describe('links and maps in the published package', () => {
  // The file list `npm pack` would publish (no build: that is `npm run check:package`'s job).
  const packed = new Set(
    (
      JSON.parse(
        execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
          cwd: ROOT,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }),
      ) as { files: { path: string }[] }[]
    )[0]!.files.map((f) => f.path),
  );

  it('every relative link of the README and the docs points at a packed file', () => {
    const documents = ['README.md', ...filesUnder('docs', /\.md$/)];
    const broken: string[] = [];
    for (const document of documents) {
      expect(packed.has(document), document).toBe(true);
      for (const [, target] of read(document).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:|^#/.test(target!)) continue;
        const path = normalize(join(dirname(document), target!.replace(/#.*$/, '')));
        if (!packed.has(path)) broken.push(`${document} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  const built = existsSync(join(ROOT, 'dist/index.js'));
  if (!built && process.env.CI === 'true') {
    throw new Error(
      'CI=true: dist/ is missing; `npm run check:package` builds it before the tests',
    );
  }
  it.skipIf(!built)(
    `every source map points at sources the package ships${built ? '' : ' (skipped: no dist/, run npm run build)'}`,
    () => {
      const maps = filesUnder('dist', /\.map$/);
      expect(maps.length).toBeGreaterThan(0);
      const missing: string[] = [];
      for (const map of maps) {
        expect(packed.has(map), map).toBe(true);
        for (const source of JSON.parse(read(map)).sources as string[]) {
          const path = relative(ROOT, join(ROOT, dirname(map), source));
          if (!packed.has(path)) missing.push(`${map} -> ${source}`);
        }
      }
      expect(missing).toEqual([]);
    },
  );
});
