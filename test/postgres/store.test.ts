/**
 * Unit tests of the Postgres store's primitives on all three drivers, plus concurrency
 * through the real guard. Each suite migrates a table of its own (uniqueTableName), so files
 * running in parallel never see each other's rows.
 */
import { sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import {
  type AnyPgDatabase,
  migratePostgres,
  type PgTransactionOf,
  pgIdempotencyTable,
  postgresStore,
} from '../../src/postgres/index.js';
import { type IdempotencyStore, LeaseLostError, type StoreExtras } from '../../src/store.js';
import {
  claimRequests,
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  type TestDbOptions,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Factory = (options?: TestDbOptions) => { db: AnyPgDatabase; close(): Promise<void> };
type AnyStore = IdempotencyStore<PgTransactionOf<AnyPgDatabase>> & StoreExtras;

const drivers: { name: string; create: Factory; multiConnection: boolean }[] = [
  { name: 'node-postgres', create: createNodePgDb, multiConnection: true },
  { name: 'postgres.js', create: createPostgresJsDb, multiConnection: true },
  { name: 'PGlite', create: createPgliteDb, multiConnection: false },
];

/** A table of business rows written through the guarded transaction. */
async function createBusinessTable(db: AnyPgDatabase, name: string): Promise<void> {
  await db.execute(
    sql`create table if not exists ${sql.identifier(name)} (id serial primary key, key text not null)`,
  );
}

async function countRows(db: AnyPgDatabase, name: string, key?: string): Promise<number> {
  const result = await db.execute(
    key === undefined
      ? sql`select count(*)::int as n from ${sql.identifier(name)}`
      : sql`select count(*)::int as n from ${sql.identifier(name)} where key = ${key}`,
  );
  const rows = Array.isArray(result) ? result : (result as { rows: { n: number }[] }).rows;
  return Number(rows[0].n);
}

async function dropTables(db: AnyPgDatabase, table: string): Promise<void> {
  await dropRecordsTable(db, table, `${table}_biz`);
}

for (const driver of drivers) {
  const needsServer = driver.multiConnection && !pg.realPostgres;
  describe.skipIf(needsServer)(
    `postgres store on ${driver.name}${needsServer ? ` (${pg.skipReason})` : ''}`,
    () => {
      let db: AnyPgDatabase;
      let close: () => Promise<void>;
      let store: AnyStore;
      const table = uniqueTableName(`mg_store_${driver.name.replace(/\W/g, '')}`);
      const biz = `${table}_biz`;
      const request = claimRequests();

      beforeAll(async () => {
        ({ db, close } = driver.create());
        expect(await migratePostgres(db, { table })).toEqual({
          applied: ['0000_init', '0001_functions'],
        });
        await createBusinessTable(db, biz);
        store = postgresStore(db, { table: pgIdempotencyTable(table) });
      });
      afterAll(async () => {
        if (!db) return;
        await dropTables(db, table);
        await close();
      });

      it('S7: the first claim holds the key, the second sees the in-flight record', async () => {
        const req = request();
        const first = await store.claim(req);
        expect(first).toMatchObject({ status: 'claimed', takenOver: false });
        const second = await store.claim(req);
        expect(second.status).toBe('exists');
        if (second.status !== 'exists') return;
        expect(second.record).toMatchObject({
          scope: 'acct_1',
          key: req.key,
          fingerprint: 'fp-a',
          operation: 'createPayment',
          state: 'in_flight',
          outcome: null,
          result: null,
        });
        // S11: lease measured on the database clock, readAt from the same clock.
        const left = second.record.leaseExpiresAt!.getTime() - second.record.readAt.getTime();
        expect(left).toBeGreaterThan(25_000);
        expect(left).toBeLessThanOrEqual(30_000);
        expect(second.record.expiresAt.getTime()).toBeGreaterThan(
          second.record.leaseExpiresAt!.getTime(),
        );
      });

      it('S4: the same key in another scope is a separate record', async () => {
        const req = request();
        expect((await store.claim(req)).status).toBe('claimed');
        expect((await store.claim({ ...req, scope: 'acct_2' })).status).toBe('claimed');
      });

      it('S11: an expired lease is taken over with a new token; the old fence is dead', async () => {
        const req = request({ leaseMs: 200 });
        const first = await store.claim(req);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        expect((await store.claim(req)).status).toBe('exists');
        await sleep(350);
        const second = await store.claim(req);
        expect(second).toMatchObject({ status: 'claimed', takenOver: true });
        if (second.status !== 'claimed') return;
        expect(second.token).not.toBe(first.token);

        const oldFence = { scope: req.scope, key: req.key, token: first.token };
        let ran = false;
        await expect(
          store.transaction(oldFence, async () => {
            ran = true;
          }),
        ).rejects.toBeInstanceOf(LeaseLostError);
        expect(ran).toBe(false);
        expect(
          await store.complete(oldFence, { result: '1', outcome: 'committed', retentionMs: 1000 }),
        ).toBe(false);
        expect(await store.release(oldFence)).toBe(false);
        expect((await store.read(req))?.state).toBe('in_flight');
      });

      it('S6: an expired lease of another fingerprint is not taken over', async () => {
        const req = request({ leaseMs: 100 });
        expect((await store.claim(req)).status).toBe('claimed');
        await sleep(250);
        const other = await store.claim({ ...req, fingerprint: 'fp-b' });
        expect(other.status).toBe('exists');
        if (other.status === 'exists') expect(other.record.fingerprint).toBe('fp-a');
      });

      it('S14: a complete record past its retention counts as absent and is claimed afresh', async () => {
        const req = request();
        const first = await store.claim(req);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: first.token };
        expect(
          await store.complete(fence, { result: '"old"', outcome: 'committed', retentionMs: 1 }),
        ).toBe(true);
        await sleep(30);
        const again = await store.claim({ ...req, fingerprint: 'fp-new' });
        expect(again).toMatchObject({ status: 'claimed', takenOver: false });
        const record = await store.read(req);
        expect(record).toMatchObject({ state: 'in_flight', fingerprint: 'fp-new', result: null });
      });

      it('S9: a complete record within retention is returned, not taken over', async () => {
        const req = request();
        const first = await store.claim(req);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: first.token };
        await store.complete(fence, {
          result: '"done"',
          outcome: 'rolled_back',
          retentionMs: 60_000,
        });
        const again = await store.claim(req);
        expect(again.status).toBe('exists');
        if (again.status === 'exists') {
          expect(again.record).toMatchObject({
            state: 'complete',
            outcome: 'rolled_back',
            result: '"done"',
            leaseExpiresAt: null,
          });
        }
      });

      it('S8: complete and release are fenced by the token', async () => {
        const req = request();
        const claim = await store.claim(req);
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const wrong = { scope: req.scope, key: req.key, token: 'not-the-token' };
        const right = { scope: req.scope, key: req.key, token: claim.token };
        const completion = { result: '1', outcome: 'committed' as const, retentionMs: 60_000 };
        expect(await store.complete(wrong, completion)).toBe(false);
        expect(await store.release(wrong)).toBe(false);
        expect((await store.read(req))?.state).toBe('in_flight');
        expect(await store.release(right)).toBe(true);
        expect(await store.read(req)).toBeUndefined();
        expect(await store.complete(right, completion)).toBe(false);
      });

      it('S8: business rows and the result commit together through tx', async () => {
        const req = request();
        const claim = await store.claim(req);
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: claim.token };
        const value = await store.transaction(fence, async (tx) => {
          await tx.execute(sql`insert into ${sql.identifier(biz)} (key) values (${req.key})`);
          const done = await store.complete(
            fence,
            { result: '"ok"', outcome: 'committed', retentionMs: 60_000 },
            tx,
          );
          expect(done).toBe(true);
          return 'ok';
        });
        expect(value).toBe('ok');
        expect(await countRows(db, biz, req.key)).toBe(1);
        expect(await store.read(req)).toMatchObject({ state: 'complete', result: '"ok"' });
      });

      it('S8: business rows and the completion roll back when the work throws', async () => {
        const req = request();
        const claim = await store.claim(req);
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: claim.token };
        const boom = new Error('boom');
        await expect(
          store.transaction(fence, async (tx) => {
            await tx.execute(sql`insert into ${sql.identifier(biz)} (key) values (${req.key})`);
            await store.complete(fence, { result: '1', outcome: 'committed', retentionMs: 1 }, tx);
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await countRows(db, biz, req.key)).toBe(0);
        expect((await store.read(req))?.state).toBe('in_flight');
      });

      it('S24: our transaction runs READ COMMITTED even when the server default is SERIALIZABLE', async () => {
        const strict = driver.create({ defaultIsolation: 'serializable' });
        try {
          const show = async (handle: AnyPgDatabase) => {
            const result = await handle.execute(sql`show transaction_isolation`);
            const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
            return (rows[0] as { transaction_isolation: string }).transaction_isolation;
          };
          // The PGlite factory has a fresh database: give it the table first.
          await migratePostgres(strict.db, { table });
          expect(await show(strict.db)).toBe('serializable');
          const strictStore = postgresStore(strict.db, { table });
          const req = request();
          const claim = await strictStore.claim(req);
          if (claim.status !== 'claimed') throw new Error('expected a claim');
          const level = await strictStore.transaction(
            { scope: req.scope, key: req.key, token: claim.token },
            show,
          );
          expect(level).toBe('read committed');
        } finally {
          await strict.close();
        }
      });

      it('S14: purge deletes only expired records, in bounded batches', async () => {
        const scope = `purge-${driver.name}`;
        for (let i = 0; i < 25; i++) {
          const req = request({ scope });
          const claim = await store.claim(req);
          if (claim.status !== 'claimed') throw new Error('expected a claim');
          await store.complete(
            { scope, key: req.key, token: claim.token },
            { result: '1', outcome: 'committed', retentionMs: 1 },
          );
        }
        const live = request({ scope });
        await store.claim(live);
        await sleep(30);
        // Other tests' records in this table are live (retention 60 s or more).
        expect(await store.purge({ batchSize: 10, maxBatches: 2 })).toBe(20);
        expect(await store.purge({ batchSize: 10, maxBatches: Number.POSITIVE_INFINITY })).toBe(5);
        expect(await store.purge({ batchSize: 10, maxBatches: 5 })).toBe(0);
        expect((await store.read(live))?.state).toBe('in_flight');
      });

      it('S22: migratePostgres is idempotent and names the index and key after the table', async () => {
        expect(await migratePostgres(db, { table })).toEqual({ applied: [] });
        const result = await db.execute(
          sql`select indexname from pg_indexes where tablename = ${table} order by indexname`,
        );
        const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
          indexname: string;
        }[];
        expect(rows.map((row) => row.indexname)).toEqual([
          `${table}_expires_at_idx`,
          `${table}_scope_key_pk`,
        ]);
      });

      it('S22: a store given the table name as a string uses that table', async () => {
        const byName = postgresStore(db, { table });
        const req = request();
        expect((await byName.claim(req)).status).toBe('claimed');
        expect((await store.read(req))?.state).toBe('in_flight');
      });

      it.skipIf(!driver.multiConnection)(
        `S10/S11: no takeover while the original transaction is open, even after its lease expired; the claim answers at once${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          const req = request({ leaseMs: 200 });
          const claim = await store.claim(req);
          if (claim.status !== 'claimed') throw new Error('expected a claim');
          const fence = { scope: req.scope, key: req.key, token: claim.token };
          let finish!: () => void;
          const gate = new Promise<void>((resolve) => {
            finish = resolve;
          });
          let started!: () => void;
          const inside = new Promise<void>((resolve) => {
            started = resolve;
          });
          const original = store.transaction(fence, async (tx) => {
            started();
            await gate;
            await tx.execute(sql`insert into ${sql.identifier(biz)} (key) values (${req.key})`);
            return store.complete(
              fence,
              { result: '"first"', outcome: 'committed', retentionMs: 60_000 },
              tx,
            );
          });
          await inside;
          // The lease runs out while the transaction (which cannot end before finish()) holds
          // the row lock, so a claim that resolves below did not wait for it.
          await sleep(350);
          try {
            const startedAt = Date.now();
            const retry = await Promise.race([
              store.claim(req),
              sleep(3000).then(() => 'blocked' as const),
            ]);
            expect(retry).not.toBe('blocked');
            expect(Date.now() - startedAt).toBeLessThan(3000);
            if (retry === 'blocked') return;
            expect(retry.status).toBe('exists');
            if (retry.status === 'exists') expect(retry.record.state).toBe('in_flight');

            finish();
            expect(await original).toBe(true);
            expect(await countRows(db, biz, req.key)).toBe(1);
            const after = await store.claim(req);
            expect(after.status).toBe('exists');
            if (after.status === 'exists') {
              expect(after.record).toMatchObject({ state: 'complete', result: '"first"' });
            }
          } finally {
            // Let the original end even when an assertion failed, so teardown cannot hang.
            finish();
            await original.catch(() => {});
          }
        },
      );
    },
  );
}

describe.skipIf(!pg.realPostgres)(
  `postgres migrations from several processes${pg.realPostgres ? '' : ` (${pg.skipReason})`}`,
  () => {
    it('S22: migratePostgres from 2 pools at once applies each migration exactly once', async () => {
      const a = createNodePgDb();
      const b = createPostgresJsDb();
      const table = uniqueTableName('mg_migrate');
      try {
        const results = await Promise.all([
          migratePostgres(a.db, { table }),
          migratePostgres(b.db, { table }),
          migratePostgres(a.db, { table }),
        ]);
        expect(results.flatMap((r) => r.applied)).toEqual(['0000_init', '0001_functions']);
        expect(await migratePostgres(b.db, { table })).toEqual({ applied: [] });
        const result = await a.db.execute(
          sql`select tag, hash from ${sql.identifier(`${table}_migrations`)}`,
        );
        expect(result.rows.map((row) => row.tag).sort()).toEqual(['0000_init', '0001_functions']);
      } finally {
        await dropTables(a.db, table);
        await Promise.all([a.close(), b.close()]);
      }
    });
  },
);

it('S22: table names that cannot be spliced into SQL are refused', () => {
  expect(() => pgIdempotencyTable('bad"name')).toThrow(TypeError);
  expect(() => pgIdempotencyTable('x'.repeat(49))).toThrow(TypeError);
  expect(() => pgIdempotencyTable('fine_name_1')).not.toThrow();
});

it('types: the guarded work receives the transaction type of the given db', () => {
  const store = (db: NodePgDatabase) => postgresStore(db);
  type Tx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];
  expectTypeOf<ReturnType<typeof store>>().toEqualTypeOf<IdempotencyStore<Tx> & StoreExtras>();
});

/** Two databases (separate pools, as two processes would have) sharing one table. */
const guardPairs: { name: string; create: () => [ReturnType<Factory>, ReturnType<Factory>] }[] = [
  {
    name: '2 node-postgres pools',
    create: () => [createNodePgDb({ max: 10 }), createNodePgDb({ max: 10 })],
  },
  {
    name: '2 postgres.js clients',
    create: () => [createPostgresJsDb({ max: 10 }), createPostgresJsDb({ max: 10 })],
  },
];

for (const pair of guardPairs) {
  describe.skipIf(!pg.realPostgres)(
    `guard concurrency through ${pair.name}${pg.realPostgres ? '' : ` (${pg.skipReason})`}`,
    () => {
      let dbs: [ReturnType<Factory>, ReturnType<Factory>];
      const table = uniqueTableName('mg_guard');
      const biz = `${table}_biz`;
      beforeAll(async () => {
        dbs = pair.create();
        await migratePostgres(dbs[0].db, { table });
        await createBusinessTable(dbs[0].db, biz);
      });
      afterAll(async () => {
        if (!dbs) return;
        await dropTables(dbs[0].db, table);
        await Promise.all(dbs.map((d) => d.close()));
      });
      const guards = () =>
        dbs.map(({ db }) => createGuard({ store: postgresStore(db, { table }) }));

      it('S7/S8/S10: 60 identical calls at once run the work exactly once; the rest replay or get 409', async () => {
        const [g1, g2] = guards();
        const key = 'same-key';
        let executions = 0;
        const calls = Array.from({ length: 60 }, (_, i) =>
          (i % 2 === 0 ? g1! : g2!).run({
            scope: 'acct_1',
            key,
            fingerprint: 'fp-a',
            operation: 'createPayment',
            work: async (tx) => {
              executions++;
              await tx.execute(sql`insert into ${sql.identifier(biz)} (key) values (${key})`);
              await sleep(20);
              return { paymentId: 'p-1' };
            },
          }),
        );
        const settled = await Promise.allSettled(calls);
        const fresh = settled.filter((s) => s.status === 'fulfilled' && !s.value.replayed);
        expect(fresh).toHaveLength(1);
        for (const s of settled) {
          if (s.status === 'fulfilled') {
            expect(s.value.value).toEqual({ paymentId: 'p-1' });
          } else {
            expect(IdempotencyError.is(s.reason) && s.reason.code).toBe('IDEMPOTENCY_KEY_IN_USE');
          }
        }
        expect(executions).toBe(1);
        expect(await countRows(dbs[0].db, biz, key)).toBe(1);
      });

      it('S7: 100 distinct keys at once each run exactly once', async () => {
        const [g1, g2] = guards();
        const keys = Array.from({ length: 100 }, (_, i) => `distinct-${i}`);
        const results = await Promise.all(
          keys.map((key, i) =>
            (i % 2 === 0 ? g1! : g2!).run({
              scope: 'acct_1',
              key,
              fingerprint: 'fp-a',
              operation: 'createPayment',
              work: async (tx) => {
                await tx.execute(sql`insert into ${sql.identifier(biz)} (key) values (${key})`);
                return key;
              },
            }),
          ),
        );
        expect(results.every((r, i) => !r.replayed && r.value === keys[i])).toBe(true);
        const result = await dbs[0].db.execute(
          sql`select count(*)::int as n, count(distinct key)::int as d from ${sql.identifier(biz)} where key like 'distinct-%'`,
        );
        const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
        expect(rows[0]).toEqual({ n: 100, d: 100 });
      });
    },
  );
}
