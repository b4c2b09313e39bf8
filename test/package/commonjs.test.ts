/**
 * What the README says about CommonJS, checked against the built package on both compilers:
 * `require()` of this ES-module-only package works on the Node versions `engines` names
 * (Node's require of ES modules); a TypeScript project compiling to CommonJS type-checks under
 * `module: node20` on both, is refused under `node16` (TS1479) on both, and under `commonjs`
 * is refused by TypeScript 5.9 (its node10 resolution cannot see `exports`, TS2307) but
 * accepted by TypeScript 7, which resolves `commonjs` through `exports` (bundler resolution).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const built = existsSync(join(ROOT, 'dist/index.js'));
if (!built && process.env.CI === 'true') {
  throw new Error('CI=true: dist/ is missing; `npm run check:package` builds it before the tests');
}

const APP = `
import { createGuard, IdempotencyError } from 'mutation-guard';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';

const guard = createGuard({ store: sqliteStore(openSqlite(':memory:')) });
const call = { scope: 's', key: 'k', fingerprint: 'f', operation: 'op', work: async () => 42 };
async function main(): Promise<void> {
  const first = await guard.run(call);
  const again = await guard.run(call);
  console.log(JSON.stringify([first, again, typeof IdempotencyError.is]));
}
void main();
`;

describe.skipIf(!built)(
  `a CommonJS app${built ? '' : ' (skipped: no dist/, run npm run build)'}`,
  () => {
    // An app of its own, with the package linked in as an install would put it.
    const app = mkdtempSync(join(tmpdir(), 'mutation-guard-cjs-'));
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(ROOT, join(app, 'node_modules/mutation-guard'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    writeFileSync(join(app, 'index.ts'), APP);
    afterAll(() => rmSync(app, { recursive: true, force: true }));

    const tsc = (module: string, compiler = 'typescript') =>
      run(
        process.execPath,
        [
          join(ROOT, `node_modules/${compiler}/bin/tsc`),
          ...['--module', module, '--target', 'es2022', '--strict', '--skipLibCheck'],
          ...['--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')],
          ...['--outDir', join(app, `out-${compiler}-${module}`), join(app, 'index.ts')],
        ],
        { cwd: app },
      ).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );

    const runs = async (module: string, compiler: string) => {
      const { stdout } = await run(
        process.execPath,
        [join(app, `out-${compiler}-${module}/index.js`)],
        { cwd: app },
      );
      expect(JSON.parse(stdout)).toEqual([
        { value: 42, replayed: false },
        { value: 42, replayed: true },
        'function',
      ]);
    };

    for (const compiler of ['typescript', 'typescript-7']) {
      it(`${compiler}: type-checks under module node20, compiles to require(), and runs`, async () => {
        expect(await tsc('node20', compiler)).toBe('');
        await runs('node20', compiler);
      }, 60_000);

      it(`${compiler}: is refused under module node16 with TS1479, as the README says`, async () => {
        expect(await tsc('node16', compiler)).toContain('TS1479');
      }, 60_000);
    }

    it('typescript (5.9): cannot see the exports under module commonjs (TS2307)', async () => {
      expect(await tsc('commonjs')).toContain('TS2307');
    }, 60_000);

    it('typescript-7: type-checks under module commonjs, compiles to require(), and runs', async () => {
      expect(await tsc('commonjs', 'typescript-7')).toBe('');
      await runs('commonjs', 'typescript-7');
    }, 60_000);
  },
);
