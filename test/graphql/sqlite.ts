/** A fresh in-memory SQLite database per call, with the business table the schema writes. */
import { openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import type { Write } from './support.js';

export function sqlitePayments() {
  const db = openSqlite(':memory:');
  db.$client.exec('create table payments (id integer primary key, amount integer, note text)');
  const write: Write = async (tx, amount, note) => {
    const handle = tx as typeof db;
    const info = handle.$client
      .prepare('insert into payments (amount, note) values (?, ?)')
      .run(amount, note);
    return Number(info.lastInsertRowid);
  };
  const count = (sql: string) => (db.$client.prepare(sql).get() as { n: number }).n;
  return {
    db,
    store: sqliteStore(db),
    write,
    fallbackTx: db,
    payments: () => count('select count(*) as n from payments'),
    records: () => count('select count(*) as n from idempotency_records'),
  };
}
