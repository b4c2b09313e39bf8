/** A fresh in-memory SQLite guard and ledger per test file. */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { createGuard, type GuardOptions } from '../../src/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import type { Ledger } from './app.js';

export function sqliteGuard(options: Omit<GuardOptions<SqliteDatabase>, 'store'> = {}) {
  const db = openSqlite(':memory:');
  const store = sqliteStore(db);
  const table = `payments_${randomBytes(4).toString('hex')}`;
  db.run(sql.raw(`create table ${table} (key text not null, path text not null, amount integer)`));
  const ledger: Ledger<SqliteDatabase> = {
    async insert(tx, row) {
      tx.run(
        sql`insert into ${sql.identifier(table)} values (${row.key}, ${row.path}, ${row.amount})`,
      );
    },
    async count() {
      const row = db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number };
      return row.n;
    },
  };
  const guard = createGuard({ store, serializer: superjson, ...options });
  return { db, store, guard, ledger };
}
