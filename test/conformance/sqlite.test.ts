/** The store conformance suite on SQLite: a WAL file and `:memory:` (SPEC S23). */
import { sql } from 'drizzle-orm';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { type DatabaseKind, openTestDatabase } from '../sqlite/helpers.js';
import { describeStoreConformance } from './suite.js';

for (const kind of ['file', 'memory'] as DatabaseKind[]) {
  describeStoreConformance<SqliteDatabase>({
    name: `sqlite (${kind})`,
    // One process, one connection: there is no second pool to race against (S23).
    skipMultiConnection: 'SQLite is single-connection by design (S23)',
    async setup() {
      const { db, close } = openTestDatabase(kind);
      return {
        store: sqliteStore(db),
        insertPayment: async (tx, id) => {
          tx.run(sql`INSERT INTO business (id) VALUES (${id})`);
        },
        countPayments: async () => db.get<{ n: number }>(sql`SELECT count(*) AS n FROM business`).n,
        close: async () => close(),
      };
    },
    async unreachable() {
      const { db, close } = openTestDatabase(kind);
      const store = sqliteStore(db);
      // A closed connection fails every statement, as a missing or locked file would.
      db.$client.close();
      return { store, close: async () => close() };
    },
  });
}
