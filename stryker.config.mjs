/**
 * `npm run mutate` (issue 34): StrykerJS plants bugs in the modules whose unit tests are fast
 * and checks that vitest.mutate.config.ts's tests catch them. Not run in CI.
 *
 * Narrow a run to one group, e.g. `npm run mutate -- --mutate 'src/core/**\/*.ts'`: the
 * incremental file keeps the other groups' earlier results, and a rerun tests only the
 * mutants whose code or covering tests changed. The SQL the Postgres store runs is mutated
 * by `npm run mutate:sql` instead (scripts/sql-mutants/).
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/core/**/*.ts',
    'src/client/*.ts',
    '!src/client/index.ts',
    'src/graphql/plan.ts',
    'src/graphql/fields.ts',
    'src/graphql/key.ts',
    'src/graphql/fingerprint.ts',
    'src/trpc/setup.ts',
  ],
  ignorePatterns: ['reports', 'dist', 'coverage', '.data', 'bench/results', '*.sqlite*'],
  // Reruns test only the mutants whose code or covering tests changed.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false },
  // Two cores, shared: one or two vitest workers at most.
  concurrency: 2,
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 75, break: null },
};
