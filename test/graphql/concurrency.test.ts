import { sql } from 'drizzle-orm';
import { GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';
import { listen } from './server.js';
import { sqlitePayments } from './sqlite.js';
import { codeOf, deferred, gql, paymentsServer, type Write } from './support.js';

const PAY = 'mutation Pay($amount: Int!) { pay(amount: $amount) { id amount } }';
const CONCURRENCY = 32;

describe('concurrent duplicates on SQLite (SPEC S7, S9)', () => {
  it(`S7: ${CONCURRENCY} identical requests at once run the resolver once and all get its answer`, async () => {
    const sqlite = sqlitePayments();
    const { yoga, harness } = paymentsServer(sqlite);
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, () =>
        gql(yoga, { query: PAY, variables: { amount: 5 }, key: 'k-burst' }),
      ),
    );
    expect(harness.calls.pay).toBe(1);
    expect(sqlite.payments()).toBe(1);
    // SQLite serialises guarded transactions: a duplicate either replays or, when it claimed
    // before the first began, is told 409. None runs the mutation again.
    const ok = responses.filter((r) => r.status === 200);
    for (const response of ok) expect(response.body.data).toEqual({ pay: { id: 1, amount: 5 } });
    for (const response of responses.filter((r) => r.status !== 200)) {
      expect(codeOf(response)).toBe('IDEMPOTENCY_KEY_IN_USE');
    }
    expect(ok.length).toBeGreaterThanOrEqual(1);
  });
});

const pg = await postgresAvailability();

describe.skipIf(!pg.realPostgres)(`over HTTP on the real Postgres ${pg.skipReason ?? ''}`, () => {
  const payments = uniqueTableName('gql_payments');
  const records = uniqueTableName('gql_records');
  const { db, close } = createNodePgDb({ max: 12 });
  const write: Write = async (tx, amount, note) => {
    const result = await (tx as typeof db).execute(
      sql`insert into ${sql.identifier(payments)} (amount, note) values (${amount}, ${note}) returning id`,
    );
    return Number(result.rows[0]!.id);
  };
  const count = async (table: string) =>
    Number(
      (await db.execute(sql`select count(*)::int as n from ${sql.identifier(table)}`)).rows[0]!.n,
    );
  const { yoga, harness } = paymentsServer({
    store: postgresStore(db, { table: records }),
    write,
    fallbackTx: db,
    guard: { wait: 5_000 },
  });
  let server: Awaited<ReturnType<typeof listen>>;
  let client: GraphQLClient;

  beforeAll(async () => {
    await migratePostgres(db, { table: records });
    await db.execute(
      sql`create table ${sql.identifier(payments)} (id serial primary key, amount int, note text)`,
    );
    server = await listen(yoga);
    client = new GraphQLClient(server.url, { errorPolicy: 'all' });
  });
  afterAll(async () => {
    await server?.close();
    await dropRecordsTable(db, records, payments);
    await close();
  });

  it(`S7/S10: ${CONCURRENCY} identical requests at once through graphql-request run the resolver once`, async () => {
    harness.calls = {};
    const results = await Promise.all(
      Array.from({ length: CONCURRENCY }, () =>
        client.rawRequest<{ pay: { id: number } }>(
          PAY,
          { amount: 5 },
          { 'Idempotency-Key': 'pg-burst' },
        ),
      ),
    );
    expect(harness.calls.pay).toBe(1);
    expect(await count(payments)).toBe(1);
    const ids = new Set(results.map((r) => r.data.pay.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(
      CONCURRENCY - 1,
    );
  });

  it('S10: without waiting, a duplicate during the run gets 409 and Retry-After over HTTP', async () => {
    const fast = paymentsServer({
      store: postgresStore(db, { table: records }),
      write,
      fallbackTx: db,
    });
    const local = await listen(fast.yoga);
    try {
      const gate = deferred();
      fast.harness.gate.wait = gate.promise;
      const headers = { 'content-type': 'application/json', 'idempotency-key': 'pg-busy' };
      const body = JSON.stringify({ query: PAY, variables: { amount: 7 } });
      const first = fetch(local.url, { method: 'POST', headers, body });
      await new Promise((r) => setTimeout(r, 100));
      const busy = await fetch(local.url, { method: 'POST', headers, body });
      expect(busy.status).toBe(409);
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await busy.json()).errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      gate.resolve();
      expect((await first).status).toBe(200);
      expect(fast.harness.calls.pay).toBe(1);
    } finally {
      await local.close();
    }
  });

  it('S8/S12: a resolver that throws on Postgres rolls its rows back and frees the key for a retry', async () => {
    harness.calls = {};
    const before = await count(payments);
    for (let i = 0; i < 2; i++) {
      const result = await client.rawRequest('mutation { crash(amount: 1) { id } }', undefined, {
        'Idempotency-Key': 'pg-crash',
      });
      expect(result.errors?.[0]?.message).toBe('Unexpected error.');
    }
    expect(harness.calls.crash).toBe(2);
    expect(await count(payments)).toBe(before);
    expect(
      Number(
        (
          await db.execute(
            sql`select count(*)::int as n from ${sql.identifier(records)} where key = 'pg-crash'`,
          )
        ).rows[0]!.n,
      ),
    ).toBe(0);
  });

  it('S9: a replay over HTTP returns the first data and errors exactly, with the header', async () => {
    const query = 'mutation { a: pay(amount: 3) { id amount } b: reject(amount: 1) { id } }';
    const kept = paymentsServer({
      store: postgresStore(db, { table: records }),
      write,
      fallbackTx: db,
      plugin: { isFinalError: (error) => error.extensions.code === 'TRY_LATER' },
    });
    const local = await listen(kept.yoga);
    try {
      const keyed = new GraphQLClient(local.url, {
        errorPolicy: 'all',
        headers: { 'Idempotency-Key': 'pg-kept' },
      });
      const first = await keyed.rawRequest(query);
      const retry = await keyed.rawRequest(query);
      expect(first.errors?.[0]?.message).toBe('Try again later');
      expect({ data: retry.data, errors: retry.errors }).toEqual({
        data: first.data,
        errors: first.errors,
      });
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(kept.harness.calls).toEqual({ pay: 1, reject: 1 });
    } finally {
      await local.close();
    }
  });
});
