/** The SQLite half of backend.ts: a file (or memory) database, WAL, the store on it. */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { IdempotencyStore } from '../../../src/index.js';
import {
  migrateSqlite,
  type SqliteDatabase,
  sqliteIdempotencyTable,
  sqliteStore,
} from '../../../src/sqlite/index.js';
import type { Backend, BackendConfig, PaymentRow } from './backend.js';

export function openSqliteBackend(config: BackendConfig): Backend {
  const client = new Database(config.location);
  const db = drizzle({ client });
  const { table } = config;
  migrateSqlite(db, { table });
  client.exec(
    `create table if not exists ${table}_payments (id integer primary key autoincrement, scope text not null, key text not null, amount integer not null)`,
  );
  const store = sqliteStore(db, {
    table: sqliteIdempotencyTable(table),
    ...(config.now ? { now: config.now } : {}),
  });
  return {
    kind: 'sqlite',
    store: store as IdempotencyStore<unknown>,
    async insertPayment(tx, row) {
      const handle = (tx as SqliteDatabase).$client;
      const info = handle
        .prepare(`insert into ${table}_payments (scope, key, amount) values (?, ?, ?)`)
        .run(row.scope, row.key, row.amount);
      return Number(info.lastInsertRowid);
    },
    async payments() {
      return client.prepare(`select * from ${table}_payments order by id`).all() as PaymentRow[];
    },
    async records() {
      return client.prepare(`select scope, key, outcome from ${table}`).all() as {
        scope: string;
        key: string;
        outcome: string;
      }[];
    },
    async close() {
      client.close();
    },
  };
}
