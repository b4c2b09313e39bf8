/**
 * The interleavings property (see interleavings.test.ts): concurrent guarded calls on one
 * key, every store call and every await in the work released in an order fast-check's
 * scheduler picks.
 */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import fc from 'fast-check';
import { createGuard, IdempotencyError, type IdempotencyStore } from '../../../src/index.js';
import { migrateSqlite, type SqliteDatabase, sqliteStore } from '../../../src/sqlite/index.js';

/** Every store call waits for the scheduler before it starts and before it returns. */
function scheduled(
  s: fc.Scheduler,
  store: IdempotencyStore<SqliteDatabase>,
): IdempotencyStore<SqliteDatabase> {
  const step = (label: string) => s.schedule(Promise.resolve(), label);
  const around = async <T>(label: string, call: () => Promise<T>): Promise<T> => {
    await step(`${label}:start`);
    const value = await call();
    await step(`${label}:end`);
    return value;
  };
  return {
    claimAndRun: (request, work) =>
      around('claimAndRun', () =>
        store.claimAndRun(request, async (tx) => {
          await step('work:start');
          return work(tx);
        }),
      ),
    purge: (options) => around('purge', () => store.purge(options)),
  };
}

const callSpec = fc.record({ fp: fc.constantFrom('fp1', 'fp2'), fails: fc.boolean() });

export function interleavingProperty() {
  return fc.asyncProperty(
    fc.scheduler(),
    fc.array(callSpec, { minLength: 2, maxLength: 5 }),
    async (s, calls) => {
      const client = new Database(':memory:');
      try {
        const db = drizzle({ client });
        migrateSqlite(db);
        client.exec('create table business (n integer not null)');
        const store = scheduled(s, sqliteStore(db));
        const guard = createGuard({ store, retention: 60_000 });
        const runs = calls.map((call, n) =>
          guard.run({
            scope: 'acct',
            key: 'k',
            fingerprint: call.fp,
            operation: 'pay',
            work: async (tx) => {
              tx.$client.prepare('insert into business values (?)').run(n);
              await s.schedule(Promise.resolve(), `work ${n}`);
              if (call.fails) throw new Error(`declined ${n}`);
              return { n, fp: call.fp };
            },
          }),
        );
        const results = await s.waitFor(Promise.allSettled(runs));
        const rows = client.prepare('select n from business').all() as { n: number }[];
        const fresh = results.flatMap((r) =>
          r.status === 'fulfilled' && !r.value.replayed ? [r.value.value] : [],
        );
        const successes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));

        if (rows.length > 1) throw new Error(`${rows.length} payments committed for one key`);
        if (fresh.length !== rows.length) {
          throw new Error(`${fresh.length} fresh answers for ${rows.length} payments`);
        }
        for (const success of successes) {
          if (success.value.n !== rows[0]?.n) throw new Error('a success names no payment');
        }
        results.forEach((r, n) => {
          if (r.status === 'fulfilled') return;
          const error = r.reason as unknown;
          const expected =
            (IdempotencyError.is(error) &&
              (error.code === 'IDEMPOTENCY_KEY_IN_USE' ||
                error.code === 'IDEMPOTENCY_KEY_REUSED')) ||
            (error instanceof Error && error.message === `declined ${n}`);
          if (!expected) throw new Error(`call ${n} failed unexpectedly: ${String(error)}`);
        });
      } finally {
        client.close();
      }
    },
  );
}
