/**
 * Interleavings (SPEC S7, S8, S10, S11): concurrent guarded calls on one key, with
 * fast-check's scheduler deciding the order in which every store call and every await inside
 * the work resumes. Whatever the order: at most one committed payment, and every success is
 * that payment's answer.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { interleavingProperty } from './support/interleavings.js';

describe('interleavings: concurrent guarded calls under fast-check scheduler', () => {
  it('S7/S8/S11: any order of awaits: at most one payment, every success is its answer', async () => {
    await fc.assert(interleavingProperty(), { seed: 6, numRuns: 150 });
  });
});
