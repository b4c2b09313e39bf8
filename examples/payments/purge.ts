/**
 * Deletes expired idempotency records on a schedule. Records past their retention
 * already count as absent; purging only keeps the table small. With many processes on one
 * Postgres each may run this: purge deletes in bounded batches, so overlapping runs are
 * cheap and harmless.
 */
import type { Guard } from '../../src/index.js';

export const PURGE_INTERVAL_MS = 10 * 60 * 1000;

/** Starts purging every `intervalMs`; returns the function that stops it. */
export function schedulePurge(
  guard: Pick<Guard<unknown>, 'purge'>,
  intervalMs = PURGE_INTERVAL_MS,
): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return; // a slow purge must not pile up behind itself
    running = true;
    try {
      const purged = await guard.purge({ batchSize: 1000, maxBatches: 100 });
      if (purged > 0) console.log(`purged ${purged} expired idempotency records`);
    } catch (error) {
      // A failed purge only delays clean-up; the next run tries again.
      console.error('idempotency purge failed:', error instanceof Error ? error.message : error);
    } finally {
      running = false;
    }
  }, intervalMs);
  // The schedule alone must not keep the process alive (tests, graceful shutdown).
  timer.unref();
  return () => clearInterval(timer);
}
