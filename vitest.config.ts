import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Postgres-backed suites share one server; files run in parallel workers but each
    // suite uses its own table names, so they never see each other's rows.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
