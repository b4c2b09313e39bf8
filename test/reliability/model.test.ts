/**
 * Model-based (SPEC S6-S14): random sequences of whole guarded runs (committing, failing or
 * keeping a final error), clock advances and purges against a reference model, on the SQLite
 * store with an injected clock. Fixed seed here; `npm run soak` runs random seeds.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { modelProperty } from './support/model.js';

describe('model-based: the store and guard follow the reference state machine', () => {
  it('S6-S14: 300 command sequences (seed 6) agree with the model, payments committed exactly when a run commits', async () => {
    await fc.assert(modelProperty(), { seed: 6, numRuns: 300 });
  });
});
