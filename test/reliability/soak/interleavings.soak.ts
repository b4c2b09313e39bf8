/**
 * Interleavings soak (issue 6): the scheduler property of the quick set, random seed.
 *
 * Run count: every run opens a SQLite store, and each store leaves an AsyncLocalStorage
 * registered for the life of the process (the bug shown by connections.test.ts), which
 * makes every later await slower. Until src/sqlite/lock.ts is fixed, a few hundred runs per
 * process is what fits in the soak's time; raise this once it is.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { interleavingProperty } from '../support/interleavings.js';
import { record, soakSeed } from './figures.js';

const RUNS = 400;

describe('soak: scheduler interleavings, random seed', () => {
  it(`S7/S8/S11: ${RUNS} scheduler interleavings of concurrent calls on one key`, async () => {
    const seed = soakSeed('interleavings');
    await fc.assert(interleavingProperty(), { seed, numRuns: RUNS });
    record({ scenario: 'scheduler interleavings (SQLite)', figures: { runs: RUNS, seed } });
  }, 240_000);
});
