/**
 * SPEC S8 end to end on the real SQLite store: when the fenced completion inside the
 * transaction matches nothing (`complete()` returns false: the claim was taken over), the
 * business writes roll back and the caller gets 409, on both surfaces.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { createGuard, type IdempotencyStore } from '../../src/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { sqlitePayments } from '../graphql/sqlite.js';
import { gql, paymentsServer } from '../graphql/support.js';
import { createApp, type Ledger } from '../trpc/app.js';

/** The store, except that a completion inside a transaction finds its claim gone. */
function losingCompletion<Tx>(store: IdempotencyStore<Tx>) {
  const calls = { complete: 0 };
  const wrapped: IdempotencyStore<Tx> = {
    claim: (request) => store.claim(request),
    transaction: (fence, work) => store.transaction(fence, work),
    complete: async (fence, completion, tx) => {
      calls.complete++;
      if (tx === undefined) return store.complete(fence, completion);
      return false;
    },
    release: (fence) => store.release(fence),
    purge: (options) => store.purge(options),
  };
  return { store: wrapped, calls };
}

describe('S8: a completion that matches nothing rolls the mutation back', () => {
  it('S8: tRPC on SQLite: the business row rolls back and the caller gets 409 IN_USE', async () => {
    const db = openSqlite(':memory:');
    const table = `payments_${randomBytes(4).toString('hex')}`;
    db.run(sql.raw(`create table ${table} (key text, path text, amount integer)`));
    const ledger: Ledger<SqliteDatabase> = {
      async insert(tx, row) {
        tx.run(
          sql`insert into ${sql.identifier(table)} values (${row.key}, ${row.path}, ${row.amount})`,
        );
      },
      async count() {
        return (db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
      },
    };
    const { store, calls } = losingCompletion(sqliteStore(db));
    const guard = createGuard({ store, serializer: superjson });
    const { router, runs, t } = createApp(guard, ledger);
    const caller = t.createCallerFactory(router)({ userId: 'alice', idempotencyKey: 'lost-1' });
    const error = await caller.pay({ amount: 5 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONFLICT' });
    expect((error as { cause: { code: string } }).cause.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(runs.pay).toBe(1);
    expect(calls.complete).toBe(1);
    expect(await ledger.count()).toBe(0);
  });

  it('S8: GraphQL on SQLite: the business row rolls back and the caller gets 409 IN_USE', async () => {
    const setup = sqlitePayments();
    const { store, calls } = losingCompletion(setup.store);
    const { yoga, harness } = paymentsServer({ ...setup, store });
    const response = await gql(yoga, {
      query: 'mutation { pay(amount: 5) { id } }',
      key: 'lost-2',
    });
    expect(response.status).toBe(409);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(harness.calls.pay).toBe(1);
    expect(calls.complete).toBe(1);
    expect(setup.payments()).toBe(0);
  });
});
