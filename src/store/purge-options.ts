/**
 * The one check of `purge` options both stores make (SPEC S14): a batch of 0 (or a fraction)
 * would delete nothing per round and, with the default unbounded number of batches, loop for
 * ever.
 */
import type { PurgeOptions } from './seam.js';

export function assertPurgeOptions({ batchSize, maxBatches }: PurgeOptions): void {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new TypeError(`purge: \`batchSize\` must be a positive integer, got ${batchSize}.`);
  }
  if (
    !(maxBatches === Number.POSITIVE_INFINITY || (Number.isInteger(maxBatches) && maxBatches >= 1))
  ) {
    throw new TypeError(
      `purge: \`maxBatches\` must be a positive integer or Infinity, got ${maxBatches}.`,
    );
  }
}
