/**
 * A consumer's type-check of the built package on both compilers users get today: TypeScript
 * 5.9 (`typescript`) and TypeScript 7 (`typescript-7`, what `npm install typescript` brings),
 * strict, under every `moduleResolution` an ES-module app uses (bundler, node16, nodenext).
 * Every subpath export is imported, so a declaration one compiler cannot read fails here.
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

const CONSUMER = `
import { createGuard, IdempotencyError, type GuardEvent } from 'mutation-guard';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';
import { postgresStore, type PgTransactionOf } from 'mutation-guard/postgres';
import type { IdempotencyStore } from 'mutation-guard/store';
import { useIdempotency } from 'mutation-guard/graphql';
import { idempotency, assertIdempotencySetup } from 'mutation-guard/trpc';
import { idempotentFetch, withRetries } from 'mutation-guard/client';
import { idempotencyLink } from 'mutation-guard/client/trpc';
import { idempotencyLink as apolloLink } from 'mutation-guard/client/apollo';
import { idempotencyExchange } from 'mutation-guard/client/urql';

const store: IdempotencyStore<unknown> = sqliteStore(openSqlite(':memory:'));
const guard = createGuard({ store, onEvent: (event: GuardEvent) => void event.type });
const answer: Promise<{ value: number; replayed: boolean }> = guard.run({
  scope: 's', key: 'k', fingerprint: 'f', operation: 'op', work: async () => 42,
});
export const used = [
  answer, IdempotencyError.is, postgresStore, useIdempotency, idempotency,
  assertIdempotencySetup, idempotentFetch, withRetries, idempotencyLink, apolloLink,
  idempotencyExchange,
];
export type Tx = PgTransactionOf<never>;
`;

const COMPILERS = ['typescript', 'typescript-7'] as const;
const SETTINGS = [
  { module: 'esnext', moduleResolution: 'bundler' },
  { module: 'node16', moduleResolution: 'node16' },
  { module: 'nodenext', moduleResolution: 'nodenext' },
] as const;

describe.skipIf(!built)(
  `a strict ES-module consumer type-checks the package${built ? '' : ' (skipped: no dist/, run npm run build)'}`,
  () => {
    const app = mkdtempSync(join(tmpdir(), 'mutation-guard-types-'));
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(ROOT, join(app, 'node_modules/mutation-guard'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(app, 'index.ts'), CONSUMER);
    afterAll(() => rmSync(app, { recursive: true, force: true }));

    for (const compiler of COMPILERS) {
      for (const { module, moduleResolution } of SETTINGS) {
        it(`${compiler}: module ${module}, moduleResolution ${moduleResolution}`, async () => {
          const tsconfig = `tsconfig.${compiler}.${module}.json`;
          writeFileSync(
            join(app, tsconfig),
            JSON.stringify({
              compilerOptions: {
                module,
                moduleResolution,
                target: 'es2022',
                strict: true,
                // As for Drizzle itself: its own declarations do not pass every strict flag.
                skipLibCheck: true,
                noEmit: true,
                types: ['node'],
                typeRoots: [join(ROOT, 'node_modules/@types')],
              },
              files: ['index.ts'],
            }),
          );
          const output = await run(
            process.execPath,
            [join(ROOT, `node_modules/${compiler}/bin/tsc`), '-p', tsconfig],
            { cwd: app },
          ).then(
            () => '',
            (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
          );
          expect(output).toBe('');
        }, 120_000);
      }
    }
  },
);
