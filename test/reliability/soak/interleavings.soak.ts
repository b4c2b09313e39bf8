/**
 * Interleavings soak: the scheduler property of the quick set, random seed.
 * Its own file (a fresh process): it was here that one AsyncLocalStorage per SQLite
 * connection showed up, slowing every run after the last (connections.test.ts, now fixed).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { interleavingProperty } from '../support/interleavings.js';
import { record, soakSeed } from './figures.js';

const RUNS = 1500;

describe('soak: scheduler interleavings, random seed', () => {
  it(`S7/S8/S11: ${RUNS} scheduler interleavings of concurrent calls on one key`, async () => {
    const seed = soakSeed('interleavings');
    await fc.assert(interleavingProperty(), { seed, numRuns: RUNS });
    record({ scenario: 'scheduler interleavings (SQLite)', figures: { runs: RUNS, seed } });
  }, 240_000);
});
