import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The test files `npm run mutate` (StrykerJS, issue 34) runs against each mutant: the unit
 * tests of src/core, src/client's framework-free half, the GraphQL plan/fields/key/fingerprint
 * code and the tRPC setup check. All run in process on in-memory SQLite; nothing here needs
 * Postgres, a browser or a spawned server, so one mutant costs seconds, not minutes.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/core/**/*.test.ts',
      'test/client/rules.test.ts',
      'test/client/*.mutants.test.ts',
      'test/graphql/*.test.ts',
      'test/trpc/*.test.ts',
    ],
    exclude: [
      // Real Postgres, or types only.
      'test/graphql/concurrency.test.ts',
      'test/trpc/concurrency.test.ts',
      'test/trpc/types.test.ts',
    ],
    // One module graph for every file a mutant runs: each file still makes its own guards
    // and in-memory databases, and importing graphql-yoga, tRPC and Drizzle once per run
    // instead of once per file is most of what a mutant costs.
    isolate: false,
  },
});
