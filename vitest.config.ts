import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests must load the graphql build Node loads for the externalized graphql-yoga and
    // graphql-tools, or graphql-js refuses schemas from "another realm". graphql 16 ships
    // CommonJS (`main`) and ESM (`module`) side by side and Vite would pick the ESM one;
    // graphql 17's exports give Vite a `development` build. Node's choice is what users get.
    alias: [
      { find: /^graphql$/, replacement: fileURLToPath(import.meta.resolve('graphql')) },
      // The README's examples import the package by name, as users do; tests run the sources.
      {
        find: /^mutation-guard$/,
        replacement: new URL('./src/index.ts', import.meta.url).pathname,
      },
      {
        find: /^mutation-guard\/(graphql|trpc|sqlite|postgres|client|client\/trpc|client\/apollo|client\/urql)$/,
        replacement: new URL('./src/$1/index.ts', import.meta.url).pathname,
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Postgres-backed suites share one server; files run in parallel workers but each
    // suite uses its own table names, so they never see each other's rows.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
