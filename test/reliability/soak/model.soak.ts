/**
 * Model soak: the model-based property of the quick set, with a random seed and
 * many more runs. (The scheduler runs are in interleavings.soak.ts: a file of their own is a
 * fresh process, see the run-count note there.)
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { modelProperty } from '../support/model.js';
import { record, soakSeed } from './figures.js';

describe('soak: model-based, random seed', () => {
  it('S6-S14: 3,000 command sequences against the reference model', async () => {
    const seed = soakSeed('model');
    await fc.assert(modelProperty(), { seed, numRuns: 3000 });
    record({ scenario: 'model-based (SQLite, driven clock)', figures: { runs: 3000, seed } });
  }, 240_000);
});
