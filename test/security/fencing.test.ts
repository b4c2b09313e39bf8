/**
 * SPEC S8 end to end: when the record a guarded call would write finds the key taken by
 * another (its claim lost to a takeover, or a record committed for the key meanwhile), the
 * business writes roll back, the caller gets 409, and the key is left to whoever holds it.
 *
 * Both of S11's models, over tRPC and GraphQL, on every store and driver: SQLite, node-postgres,
 * postgres.js, both again on sessions defaulting to SERIALIZABLE, and PGlite.
 *
 * - the lease model (the store without `claimAndRun`): the fenced completion inside the
 *   transaction is sent with a token that no longer holds the record, as after a takeover,
 *   and the store's real UPDATE matches nothing. Once the lease has run out, a retry takes
 *   the key over and pays once;
 * - the one-transaction model (`claimAndRun`, what the shipped stores use): while the work
 *   runs, a complete record for the key is written past the claim's lock (as an engine whose
 *   advisory locks do nothing would let a duplicate do), and the record written before COMMIT
 *   finds it. On a server the intruder commits from a connection of its own, so a retry is
 *   answered from its record (422: it is another request's). SQLite and PGlite have one
 *   connection, so the intruder writes inside the guarded transaction and rolls back with
 *   it: a retry finds the key free and pays once.
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

/** Short, so that a retry after it takes over the lost claim within the test. */
const LEASE_MS = 400;

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
          `insert into idempotency_records (scope, key, fingerprint, operation, state, token, outcome, result, expires_at, created_at, completed_at) values (?, ?, 'another request', 'pay', 'complete', 'theirs', 'committed', 'null', ?, ?, ?)`,
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
        sql`insert into ${sql.identifier(records)} (scope, key, fingerprint, operation, state, token, outcome, result, expires_at, created_at, completed_at) values (${scope}, ${key}, 'another request', 'pay', 'complete', 'theirs', 'committed', 'null', now() + interval '1 day', now(), now())`,
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

/**
 * The lease model's fault: `claimAndRun` hidden, and the completion inside the transaction
 * sent with a token that no longer holds the record, so the store's fenced UPDATE matches
 * nothing, as after a takeover.
 */
function staleCompletion(store: IdempotencyStore<unknown>) {
  const calls = { complete: 0 };
  const wrapped: IdempotencyStore<unknown> = {
    claim: (request) => store.claim(request),
    transaction: (fence, work) => store.transaction(fence, work),
    complete: async (fence, completion, tx) => {
      if (tx === undefined) return store.complete(fence, completion);
      calls.complete++;
      return store.complete({ ...fence, token: 'taken-over' }, completion, tx);
    },
    release: (fence) => store.release(fence),
    purge: (options) => store.purge(options),
  };
  return { store: wrapped, calls };
}

type Model = 'lease' | 'one-transaction';
const MODELS: Model[] = ['lease', 'one-transaction'];

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
      const guard = createGuard({ store, serializer: superjson, lease: LEASE_MS });
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
        guard: { lease: LEASE_MS },
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

      for (const model of MODELS) {
        for (const surface of SURFACES) {
          const after =
            model === 'lease'
              ? 'after the lease a retry takes over and pays once'
              : 'a retry is answered from the record that won (422), or, where it rolled back with ours, pays once';
          it(`S8/S11 ${surface.name} on ${target.name}, ${model} model: no business row, 409 IN_USE; ${after}`, async () => {
            const backend = await open();
            const runs: Runs = { count: 0 };
            const key = `lost-${model}-${randomBytes(4).toString('hex')}`;

            let faulty = backend.store;
            let completions: { complete: number } | undefined;
            if (model === 'lease') {
              const stale = staleCompletion(backend.store);
              faulty = stale.store;
              completions = stale.calls;
            } else {
              runs.during = (tx) => backend.intrude(tx, surface.scope, key);
            }

            const lost = await surface.pay(faulty, backend, key, runs);
            expect(lost).toEqual({ ok: false, code: 'IDEMPOTENCY_KEY_IN_USE' });
            expect(runs.count).toBe(1);
            if (completions) expect(completions.complete).toBe(1);
            // The payment was written inside the transaction and must have rolled back (S8).
            expect(await backend.payments()).toBe(0);

            runs.during = undefined;
            if (model === 'lease') {
              // The record is still in flight under the lost claim's lease: a retry waits it out.
              await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));
            }
            const retry = await surface.pay(backend.store, backend, key, runs);
            if (model === 'one-transaction' && backend.intruderCommits) {
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
      }
    });
  }
});
