/**
 * SPEC S7-S10 through tRPC: many identical calls fired at once over HTTP run the procedure
 * once, on SQLite (one process, serialised) and on the real Postgres (row locks, 409s).
 */
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/index.js';
import { migratePostgres, type PgTransactionOf, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';
import { createApp, type Ledger } from './app.js';
import { connect, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const CALLS = 40;

/** Fires `CALLS` identical mutations at once, each on its own HTTP request. */
async function stampede(url: string, key: string, batch = false) {
  const clients = Array.from({ length: CALLS }, () => connect(url, { batch }));
  return Promise.allSettled(
    clients.map(({ trpc }) => trpc.pay.mutate({ amount: 42, idempotencyKey: key })),
  );
}

describe('concurrent retries on SQLite', () => {
  const sqlite = sqliteGuard({ wait: 10_000 });
  const app = createApp(sqlite.guard, sqlite.ledger, { delayMs: 50 });
  let served: Served;
  beforeAll(async () => {
    served = await serve(app.router);
  });
  afterAll(() => served.close());

  it(`S7/S9: ${CALLS} identical calls at once run the procedure once and all get its output`, async () => {
    const results = await stampede(served.url, 'k-stampede-sqlite');
    const values = results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason));

    expect(app.runs.pay).toBe(1);
    expect(await sqlite.ledger.count()).toBe(1);
    for (const value of values) expect(value).toEqual(values[0]);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
  });
});

const pg = await postgresAvailability();

describe.skipIf(!pg.realPostgres)(`concurrent retries on Postgres ${pg.skipReason ?? ''}`, () => {
  const { db, close } = createNodePgDb({ max: 20 });
  type Tx = PgTransactionOf<typeof db>;
  const table = uniqueTableName('trpc_concurrency');
  const payments = `${table}_payments`;
  const ledger: Ledger<Tx> = {
    async insert(tx, row) {
      await tx.execute(
        sql`insert into ${sql.identifier(payments)} values (${row.key}, ${row.path}, ${row.amount})`,
      );
    },
    async count() {
      const result = await db.execute(
        sql`select count(*)::int as n from ${sql.identifier(payments)}`,
      );
      return (result.rows[0] as { n: number }).n;
    },
  };
  const store = postgresStore(db, { table });
  const waiting = createApp(createGuard({ store, serializer: superjson, wait: 10_000 }), ledger, {
    delayMs: 200,
  });
  const immediate = createApp(createGuard({ store, serializer: superjson }), ledger, {
    delayMs: 200,
  });
  let servedWaiting: Served;
  let servedImmediate: Served;

  beforeAll(async () => {
    await migratePostgres(db, { table });
    await db.execute(
      sql.raw(`create table ${payments} (key text not null, path text not null, amount integer)`),
    );
    servedWaiting = await serve(waiting.router);
    servedImmediate = await serve(immediate.router);
  });
  afterAll(async () => {
    await servedWaiting?.close();
    await servedImmediate?.close();
    await dropRecordsTable(db, table, payments);
    await close();
  });

  it(`S7/S9/S10: ${CALLS} identical calls at once with wait run once, and all get the same output`, async () => {
    const rows = await ledger.count();
    const results = await stampede(servedWaiting.url, 'k-stampede-pg-wait');

    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    const values = results.map((r) => (r as PromiseFulfilledResult<unknown>).value);
    for (const value of values) expect(value).toEqual(values[0]);
    expect(waiting.runs.pay).toBe(1);
    expect(await ledger.count()).toBe(rows + 1);
  });

  it(`S7/S10: ${CALLS} identical calls at once without wait run once; the others are 409 or replays`, async () => {
    const rows = await ledger.count();
    const results = await stampede(servedImmediate.url, 'k-stampede-pg-409', true);
    const fulfilled = results.filter((r) => r.status === 'fulfilled');
    const rejected = results.filter((r) => r.status === 'rejected');

    expect(immediate.runs.pay).toBe(1);
    expect(await ledger.count()).toBe(rows + 1);
    expect(fulfilled.length).toBeGreaterThanOrEqual(1);
    expect(rejected.length).toBeGreaterThanOrEqual(1);
    for (const r of rejected) {
      expect(r.reason).toMatchObject({
        data: { httpStatus: 409, idempotencyCode: 'IDEMPOTENCY_KEY_IN_USE' },
      });
    }
  });

  it('S12: a failing procedure on Postgres rolls back its rows and frees the key', async () => {
    const rows = await ledger.count();
    const { trpc } = connect(servedImmediate.url);
    const input = { amount: 1, mode: 'trpc' as const, idempotencyKey: 'k-pg-fail' };
    await expect(trpc.failing.mutate(input)).rejects.toMatchObject({ data: { httpStatus: 412 } });
    await expect(trpc.failing.mutate(input)).rejects.toMatchObject({ data: { httpStatus: 412 } });

    expect(immediate.runs.failing).toBe(2);
    expect(await ledger.count()).toBe(rows);
  });
});
