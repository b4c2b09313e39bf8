/**
 * SPEC S8 end to end: when the record a guarded call would write finds the key taken by
 * another (a record committed for the key meanwhile), the business writes roll back, the
 * caller gets 409, and the key is left to whoever holds it.
 *
 * Over tRPC and GraphQL, on every store and driver: SQLite, node-postgres, postgres.js, both
 * again on sessions defaulting to SERIALIZABLE, and PGlite. While the work runs, a complete
 * record for the key is written past the claim's lock (as an engine whose advisory locks do
 * nothing would let a duplicate do), and the record written before COMMIT finds it: the primary
 * key decides. On a server the intruder commits from a connection of its own, so a retry is
 * answered from its record (422: it is another request's). SQLite and PGlite have one
 * connection, so the intruder writes inside the guarded transaction and rolls back with it: a
 * retry finds the key free and pays once.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, describe, expect, it } from 'vitest';
import { createGuard, type IdempotencyStore } from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { openSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { gql, paymentsServer } from '../graphql/support.js';
import {
  createPgliteDb,
  dropRecordsTable,
  postgresAvailability,
  SERVER_DRIVERS,
  type TestDb,
  uniqueTableName,
} from '../support/postgres.js';
import { createApp, type Ledger } from '../trpc/app.js';

const pg = await postgresAvailability();

/** One store on one database, with the business table the guarded mutations write. */
interface Backend {
  store: IdempotencyStore<unknown>;
  /** Writes a payment through the guarded transaction; resolves to its id. */
  insertPayment(tx: unknown, amount: number): Promise<number>;
  payments(): Promise<number>;
  /**
   * Writes a complete record for (scope, key), as another request's: through `tx` where the
   * database has one connection, else committed from a connection of its own.
   */
  intrude(tx: unknown, scope: string, key: string): Promise<void>;
  /** True when the intruder's record outlives the guarded transaction's rollback. */
  intruderCommits: boolean;
  close(): Promise<void>;
}

interface Target {
  name: string;
  skip?: string;
  open(): Promise<Backend>;
}

function sqliteBackend(): Backend {
  const db = openSqlite(':memory:');
  const payments = `payments_${randomBytes(4).toString('hex')}`;
  db.$client.exec(`create table ${payments} (id integer primary key, amount integer)`);
  const now = Date.now();
  return {
    store: sqliteStore(db),
    async insertPayment(tx, amount) {
      const info = (tx as SqliteDatabase).$client
        .prepare(`insert into ${payments} (amount) values (?)`)
        .run(amount);
      return Number(info.lastInsertRowid);
    },
    async payments() {
      return (db.$client.prepare(`select count(*) as n from ${payments}`).get() as { n: number }).n;
    },
    async intrude(tx, scope, key) {
      (tx as SqliteDatabase).$client
        .prepare(
          `insert into idempotency_records (scope, key, fingerprint, operation, outcome, result, expires_at, created_at, completed_at) values (?, ?, 'another request', 'pay', 'committed', 'null', ?, ?, ?)`,
        )
        .run(scope, key, now + 86_400_000, now, now);
    },
    intruderCommits: false,
    async close() {
      db.$client.close();
    },
  };
}

/** Rows of a Drizzle `execute` on any driver: postgres.js answers an array, the others `rows`. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  return Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows;
}

async function postgresBackend(
  { db, close }: TestDb<Parameters<typeof postgresStore>[0]>,
  oneConnection: boolean,
): Promise<Backend> {
  const records = uniqueTableName('fencing');
  const payments = `${records}_payments`;
  await migratePostgres(db, { table: records });
  await db.execute(sql.raw(`create table "${payments}" (id serial primary key, amount int)`));
  type Handle = typeof db;
  return {
    store: postgresStore(db, { table: records }) as IdempotencyStore<unknown>,
    async insertPayment(tx, amount) {
      const result = await (tx as Handle).execute(
        sql`insert into ${sql.identifier(payments)} (amount) values (${amount}) returning id`,
      );
      return Number(rowsOf(result)[0]!.id);
    },
    async payments() {
      const result = await db.execute(
        sql`select count(*)::int as n from ${sql.identifier(payments)}`,
      );
      return Number(rowsOf(result)[0]!.n);
    },
    async intrude(tx, scope, key) {
      await (oneConnection ? (tx as Handle) : db).execute(
        sql`insert into ${sql.identifier(records)} (scope, key, fingerprint, operation, outcome, result, expires_at, created_at, completed_at) values (${scope}, ${key}, 'another request', 'pay', 'committed', 'null', now() + interval '1 day', now(), now())`,
      );
    },
    intruderCommits: !oneConnection,
    async close() {
      await dropRecordsTable(db, records, payments);
      await close();
    },
  };
}

const TARGETS: Target[] = [
  { name: 'SQLite', open: async () => sqliteBackend() },
  ...SERVER_DRIVERS.map(
    (driver): Target => ({
      name: driver.name,
      skip: pg.skipReason,
      open: () => postgresBackend(driver.open(), false),
    }),
  ),
  { name: 'PGlite', open: () => postgresBackend(createPgliteDb(), true) },
];

/** What one guarded call answered: success, or the code of its error. */
interface Answer {
  ok: boolean;
  code?: unknown;
}

/** A surface: builds its app on a store and sends the guarded payment once. */
interface Surface {
  name: string;
  /** Scope the app claims under (the intruder needs it). */
  scope: string;
  pay(store: IdempotencyStore<unknown>, backend: Backend, key: string, runs: Runs): Promise<Answer>;
}

/** How often the mutation ran across one test's apps, and the fault each run meets. */
interface Runs {
  count: number;
  /** Called inside the guarded transaction, after the payment: the fault, if any. */
  during?: (tx: unknown) => Promise<void>;
}

const SURFACES: Surface[] = [
  {
    name: 'tRPC',
    scope: 'alice',
    async pay(store, backend, key, runs) {
      const guard = createGuard({ store, serializer: superjson });
      const ledger: Ledger<unknown> = {
        async insert(tx, row) {
          runs.count++;
          await backend.insertPayment(tx, row.amount);
          await runs.during?.(tx);
        },
        count: () => backend.payments(),
      };
      const { router, t } = createApp(guard, ledger);
      const caller = t.createCallerFactory(router)({ userId: 'alice', idempotencyKey: key });
      return caller.pay({ amount: 5 }).then(
        () => ({ ok: true }),
        (error: { code?: string; cause?: { code?: string } }) => ({
          ok: false,
          code: error.cause?.code ?? error.code,
        }),
      );
    },
  },
  {
    name: 'GraphQL',
    scope: 'acct_1',
    async pay(store, backend, key, runs) {
      const { yoga } = paymentsServer({
        store,
        fallbackTx: undefined,
        write: async (tx, amount) => {
          runs.count++;
          const id = await backend.insertPayment(tx, amount);
          await runs.during?.(tx);
          return id;
        },
      });
      const response = await gql(yoga, { query: 'mutation { pay(amount: 5) { id } }', key });
      return response.status === 200 && !response.body.errors
        ? { ok: true }
        : { ok: false, code: response.body.errors?.[0]?.extensions?.code };
    },
  },
];

describe('S8: a record that finds the key taken rolls the mutation back', () => {
  for (const target of TARGETS) {
    describe.skipIf(target.skip !== undefined)(`${target.name} ${target.skip ?? ''}`, () => {
      const opened: Backend[] = [];
      const open = async () => {
        const backend = await target.open();
        opened.push(backend);
        return backend;
      };
      afterAll(async () => {
        for (const backend of opened) await backend.close();
      });

      for (const surface of SURFACES) {
        it(`S8 ${surface.name} on ${target.name}: no business row, 409 IN_USE; a retry is answered from the record that won (422), or, where it rolled back with ours, pays once`, async () => {
          const backend = await open();
          const runs: Runs = { count: 0 };
          const key = `lost-${randomBytes(4).toString('hex')}`;
          runs.during = (tx) => backend.intrude(tx, surface.scope, key);

          const lost = await surface.pay(backend.store, backend, key, runs);
          expect(lost).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_IN_USE' });
          expect(runs.count).toBe(1);
          // The payment was written inside the transaction and must have rolled back (S8).
          expect(await backend.payments()).toBe(0);

          runs.during = undefined;
          const retry = await surface.pay(backend.store, backend, key, runs);
          if (backend.intruderCommits) {
            expect(retry).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_REUSED' });
            expect(runs.count).toBe(1);
            expect(await backend.payments()).toBe(0);
          } else {
            expect(retry).toEqual({ ok: true });
            expect(runs.count).toBe(2);
            expect(await backend.payments()).toBe(1);
          }
        }, 20_000);
      }
    });
  }
});
