/**
 * What only the Postgres store has, on all three drivers: its isolation level whatever the
 * server's default (S24), its migrations and table names (S22), and its types. The rules
 * every store meets, this one included, are in test/conformance/ (run on every driver by
 * test/conformance/postgres*.test.ts and pgbouncer.test.ts). Each suite migrates a table of
 * its own (uniqueTableName), so files running in parallel never see each other's rows.
 */
import { sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AnyPgDatabase,
  migratePostgres,
  type PgTransactionOf,
  pgIdempotencyTable,
  postgresStore,
} from '../../src/postgres/index.js';
import type { IdempotencyStore, StoreExtras } from '../../src/store/seam.js';
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

/** The record of a work that answered `value`. */
const written = (value: unknown) => ({
  result: JSON.stringify(value),
  outcome: 'committed' as const,
  retentionMs: 60_000,
});

type Factory = (options?: TestDbOptions) => { db: AnyPgDatabase; close(): Promise<void> };
type AnyStore = IdempotencyStore<PgTransactionOf<AnyPgDatabase>> & StoreExtras;

const drivers: { name: string; create: Factory; multiConnection: boolean }[] = [
  { name: 'node-postgres', create: createNodePgDb, multiConnection: true },
  { name: 'postgres.js', create: createPostgresJsDb, multiConnection: true },
  { name: 'PGlite', create: createPgliteDb, multiConnection: false },
];

for (const driver of drivers) {
  const needsServer = driver.multiConnection && !pg.realPostgres;
  describe.skipIf(needsServer)(
    `postgres store on ${driver.name}${needsServer ? ` (${pg.skipReason})` : ''}`,
    () => {
      let db: AnyPgDatabase;
      let close: () => Promise<void>;
      let store: AnyStore;
      const table = uniqueTableName(`mg_store_${driver.name.replace(/\W/g, '')}`);
      const request = claimRequests();

      beforeAll(async () => {
        ({ db, close } = driver.create());
        expect(await migratePostgres(db, { table })).toEqual({ applied: ['0000_init'] });
        store = postgresStore(db, { table: pgIdempotencyTable(table) });
      });
      afterAll(async () => {
        if (!db) return;
        await dropRecordsTable(db, table);
        await close();
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
          const level = await strictStore.claimAndRun(request(), async (tx) => {
            const value = await show(tx);
            return { value, completion: written(value) };
          });
          expect(level).toEqual({ status: 'done', value: 'read committed' });
        } finally {
          await strict.close();
        }
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
        const run = await byName.claimAndRun(req, async () => ({
          value: 1,
          completion: written(1),
        }));
        expect(run.status).toBe('done');
        expect(await store.read(req)).toMatchObject({ result: '1' });
      });
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
        expect(results.flatMap((r) => r.applied)).toEqual(['0000_init']);
        expect(await migratePostgres(b.db, { table })).toEqual({ applied: [] });
        const result = await a.db.execute(
          sql`select tag, hash from ${sql.identifier(`${table}_migrations`)}`,
        );
        expect(result.rows.map((row) => row.tag)).toEqual(['0000_init']);
      } finally {
        await dropRecordsTable(a.db, table);
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
