/**
 * Many short-lived SQLite connections (found by the soak, SPEC S23). Each `sqliteStore` gets
 * a connection lock; the lock used to create its own AsyncLocalStorage, and on Node 20 every
 * AsyncLocalStorage that was ever `run()` stays registered with async_hooks for the life of
 * the process, so every promise anywhere paid for each closed connection (200k awaits: 55 ms
 * before, 61 s after 2,000 closed stores). src/sqlite/lock.ts now shares one
 * AsyncLocalStorage across all locks; this guards against the leak coming back. The ratio is
 * taken within one run. The leak made each closed store cost about half the baseline again
 * (300 stores: over 100x), so the bound sits an order of magnitude below it and far above
 * what a busy machine or another Node version does to an unchanged loop (seen: up to 4x).
 */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createGuard } from '../../src/index.js';
import { migrateSqlite, sqliteStore } from '../../src/sqlite/index.js';

async function awaitsMs(count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++) await Promise.resolve(i);
  return performance.now() - started;
}

describe('short-lived SQLite connections', () => {
  it('S23: 300 closed SQLite stores leave no per-connection AsyncLocalStorage behind: every await in the process stays as fast', async () => {
    await awaitsMs(50_000); // warm up, so that `before` is not a cold loop
    const before = Math.max(await awaitsMs(50_000), 1);
    for (let n = 0; n < 300; n++) {
      const client = new Database(':memory:');
      const db = drizzle({ client });
      migrateSqlite(db);
      const guard = createGuard({ store: sqliteStore(db) });
      await guard.run({
        scope: 's',
        key: 'k',
        fingerprint: 'f',
        operation: 'o',
        work: async () => 1,
      });
      client.close();
    }
    const after = await awaitsMs(50_000);
    expect(after / before).toBeLessThan(15);
  }, 60_000);
});
