/**
 * Model soak (issue 6): the model-based and scheduler properties of the quick set, with
 * random seeds and many more runs.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { interleavingProperty } from '../support/interleavings.js';
import { modelProperty } from '../support/model.js';
import { record, soakSeed } from './figures.js';

describe('soak: model-based and interleavings, random seeds', () => {
  it('S6-S14: 3,000 command sequences against the reference model', async () => {
    const seed = soakSeed('model');
    await fc.assert(modelProperty(), { seed, numRuns: 3000 });
    record({ scenario: 'model-based (SQLite, driven clock)', figures: { runs: 3000, seed } });
  }, 240_000);

  it('S7/S8/S11: 600 scheduler interleavings of concurrent calls on one key', async () => {
    const seed = soakSeed('interleavings');
    await fc.assert(interleavingProperty(), { seed, numRuns: 600 });
    record({ scenario: 'scheduler interleavings (SQLite)', figures: { runs: 600, seed } });
  }, 240_000);
});
