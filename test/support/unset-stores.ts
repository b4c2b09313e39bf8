/**
 * Stores on databases that are not set up, as an operator meets them: on Postgres a records
 * table that drizzle-kit created from the re-exported schema, without the store's functions
 * (the custom migration forgotten); on SQLite no records table at all (the migration never
 * run). Each says what its setup failure must name.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { IdempotencyStore } from '../../src/index.js';
import {
  type AnyPgDatabase,
  postgresFunctionsSql,
  postgresStore,
} from '../../src/postgres/index.js';
import { migrateSqlite, openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  uniqueTableName,
} from './postgres.js';

export interface UnsetStore {
  // biome-ignore lint/suspicious/noExplicitAny: each store types its own transaction handle
  store: IdempotencyStore<any>;
  /** What the operator must be told: the missing object and the fix. */
  missing: RegExp;
  /** Sets the database up as the store needs, so that guarded calls work. */
  fix(): Promise<void>;
  close(): Promise<void>;
}

export interface UnsetStoreKind {
  name: string;
  /** Whether it needs the real Postgres server. */
  needsServer: boolean;
  open(): Promise<UnsetStore>;
}

const BREAKPOINT = '--> statement-breakpoint';

async function runEach(
  db: AnyPgDatabase,
  text: string,
  keep: (statement: string) => boolean = () => true,
): Promise<void> {
  for (const statement of text.split(BREAKPOINT)) {
    if (statement.trim() && keep(statement)) await db.execute(sql.raw(statement));
  }
}

/**
 * The records table as drizzle-kit creates it from the re-exported schema: the shipped
 * migration's table and index statements, not its functions.
 */
async function tableWithoutFunctions(db: AnyPgDatabase, table: string): Promise<void> {
  const file = new URL('../../drizzle/postgres/0000_init.sql', import.meta.url);
  const text = readFileSync(file, 'utf8').replaceAll('"idempotency_records', `"${table}`);
  await runEach(db, text, (statement) => !/\bFUNCTION\b/i.test(statement));
}

function postgresKind(
  name: string,
  needsServer: boolean,
  create: () => { db: unknown; close(): Promise<void> },
): UnsetStoreKind {
  return {
    name,
    needsServer,
    async open() {
      const opened = create();
      const db = opened.db as AnyPgDatabase;
      const table = uniqueTableName(`mg_unset_${name}`);
      await tableWithoutFunctions(db, table);
      return {
        store: postgresStore(db, { table }),
        missing: new RegExp(
          `records table "${table}" has no function "${table}_begin".*migratePostgres`,
        ),
        // What the operator then does: adds the functions as drizzle-kit's custom migration.
        fix: async () => runEach(db, await postgresFunctionsSql({ table })),
        async close() {
          await dropRecordsTable(db, table);
          await opened.close();
        },
      };
    },
  };
}

export const UNSET_STORES: UnsetStoreKind[] = [
  postgresKind('node-postgres', true, () => createNodePgDb()),
  postgresKind('postgres.js', true, () => createPostgresJsDb()),
  postgresKind('PGlite', false, () => createPgliteDb()),
  {
    name: 'SQLite',
    needsServer: false,
    async open() {
      // openSqlite migrates the default table; the store is pointed at one nobody created.
      const db = openSqlite(':memory:');
      const table = 'payments_keys';
      return {
        store: sqliteStore(db, { table }),
        missing:
          /records table "payments_keys" is not set up.*no such table: payments_keys.*migrateSqlite/,
        async fix() {
          migrateSqlite(db, { table });
        },
        async close() {
          db.$client.close();
        },
      };
    },
  },
];
