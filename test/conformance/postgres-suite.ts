/**
 * The store conformance suite on Postgres (SPEC S24): the real server through node-postgres
 * and postgres.js (each also on sessions that default to SERIALIZABLE), and PGlite. Under
 * CI=true the real server is required (never skipped); on a laptop without one, the
 * real-server targets are skipped with a visible reason. The drivers are split over a few
 * test files (postgres-*.test.ts) so that vitest runs them in parallel: each spends most of
 * its time waiting for retention to run out.
 */
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { afterAll, describe } from 'vitest';
import type { IdempotencyStore, StoreExtras } from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';
import { type ConformanceTarget, describeStoreConformance } from './suite.js';

// biome-ignore lint/suspicious/noExplicitAny: any Drizzle Postgres database, whatever its driver.
type AnyDb = PgDatabase<PgQueryResultHKT, any, any>;

export interface Driver {
  name: string;
  open(options?: { url?: string; max?: number }): { db: AnyDb; close(): Promise<void> };
  needsServer: boolean;
}

// S24: correct whatever the server's default isolation; both drivers run the suite again on
// sessions that default to SERIALIZABLE.
const serializable = { defaultIsolation: 'serializable' } as const;

// PGlite takes seconds to boot, so its tests share one instance (each test still gets a
// table of its own); it is closed once the file is done.
let sharedPglite: ReturnType<typeof createPgliteDb> | undefined;
afterAll(async () => {
  await sharedPglite?.close();
});

export const drivers = {
  nodePg: { name: 'node-postgres Pool', open: (o) => createNodePgDb(o), needsServer: true },
  postgresJs: { name: 'postgres.js', open: (o) => createPostgresJsDb(o), needsServer: true },
  nodePgSerializable: {
    name: 'node-postgres Pool, default serializable',
    open: (o) => createNodePgDb({ ...o, ...serializable }),
    needsServer: true,
  },
  postgresJsSerializable: {
    name: 'postgres.js, default serializable',
    open: (o) => createPostgresJsDb({ ...o, ...serializable }),
    needsServer: true,
  },
  pglite: {
    name: 'PGlite',
    open: () => {
      sharedPglite ??= createPgliteDb();
      return { db: sharedPglite.db, close: async () => {} };
    },
    needsServer: false,
  },
} satisfies Record<string, Driver>;

export async function describePostgresConformance(list: Driver[]): Promise<void> {
  const pg = await postgresAvailability();
  for (const driver of list) {
    describe.skipIf(driver.needsServer && !pg.realPostgres)(
      `${driver.name}${driver.needsServer && pg.skipReason ? ` (${pg.skipReason})` : ''}`,
      () => {
        describeStoreConformance<unknown>(conformanceTarget(`postgres (${driver.name})`, driver));
      },
    );
  }
}

/**
 * The conformance target for one driver: a migrated table of its own per test, a business
 * table beside it, a second store through a second pool, and an unreachable server.
 */
export function conformanceTarget(name: string, driver: Driver): ConformanceTarget<unknown> {
  return {
    name,
    ...(driver.needsServer ? {} : { skipMultiConnection: 'PGlite has a single connection' }),
    async setup(options = {}) {
      const table = uniqueTableName('conf');
      const business = `${table}_business`;
      const { db, close } = driver.open(
        options.connections === undefined ? {} : { max: options.connections },
      );
      await migratePostgres(db, { table });
      await db.execute(sql.raw(`CREATE TABLE "${business}" (id text PRIMARY KEY)`));
      const opened: { close(): Promise<void> }[] = [];
      return {
        store: postgresStore(db, { table }) as IdempotencyStore<unknown> & StoreExtras,
        insertPayment: async (tx, id) => {
          await (tx as AnyDb).execute(
            sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${id})`,
          );
        },
        countPayments: async () => {
          const result = await db.execute(sql.raw(`SELECT count(*)::int AS n FROM "${business}"`));
          const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
          return (rows[0] as { n: number }).n;
        },
        secondStore: async () => {
          const second = driver.open();
          opened.push(second);
          return postgresStore(second.db, { table }) as IdempotencyStore<unknown>;
        },
        close: async () => {
          for (const other of opened) await other.close();
          await dropRecordsTable(db, table, business);
          await close();
        },
      };
    },
    async unreachable() {
      // Nothing listens on port 1: every connection attempt is refused. PGlite cannot be
      // unreachable, so it gets an instance of its own, closed.
      const { db, close } = driver.needsServer
        ? driver.open({ url: 'postgres://postgres@127.0.0.1:1/test' })
        : createPgliteDb();
      if (!driver.needsServer) await close();
      return {
        store: postgresStore(db) as IdempotencyStore<unknown>,
        close: driver.needsServer ? close : async () => {},
      };
    },
  };
}
