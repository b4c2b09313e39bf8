import { defineConfig } from 'vitest/config';

/**
 * `npm run soak`: the long randomized reliability runs (issue 6). Only *.soak.ts files, which
 * the default config (test/**\/*.test.ts) never picks up. Each file bounds its own time; the
 * global teardown prints one summary of every figure, to paste into docs/reliability.md.
 */
export default defineConfig({
  resolve: {
    // As in vitest.config.ts: Node's graphql build, the one graphql-yoga loads.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/reliability/soak/**/*.soak.ts'],
    globalSetup: ['test/reliability/soak/summary.ts'],
    // The files compete for two cores with the server processes they start; one at a time
    // keeps the timing assumptions (leases) honest.
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
