/**
 * The order of the one-transaction claim's two advisory locks (SPEC S6, S10;
 * drizzle/postgres's `_begin`): the request's lock first, then the key's, and never the key's
 * without the request's. Whoever holds a key then holds its request's lock too, which is how
 * a duplicate tells the same request (409) from another one (422) with no row to read.
 *
 * A duplicate holds its request's lock for a moment while it answers. Here a session of the
 * test holds it, as such a duplicate would, for as long as the test needs. (A bug that took
 * the key's lock first survived the rest of the suite: `npm run mutate:sql`.)
 */
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { deferred } from '../support/deferred.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  type TestDb,
  uniqueTableName,
} from '../support/postgres.js';

const pg_ = await postgresAvailability();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a guarded call came to: `fresh:<value>`, `replayed:<value>` or its code. */
async function outcomeOf(call: Promise<{ value: unknown; replayed: boolean }>): Promise<string> {
  try {
    const { value, replayed } = await call;
    return `${replayed ? 'replayed' : 'fresh'}:${String(value)}`;
  } catch (error) {
    return IdempotencyError.is(error) ? error.code : `error: ${String(error)}`;
  }
}

describe.skipIf(!pg_.realPostgres)(
  `node-postgres: the request's lock before the key's${pg_.skipReason ? ` (${pg_.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('request_lock');
    const business = `${table}_business`;
    let db: TestDb<AnyPgDatabase>;

    beforeAll(async () => {
      db = createNodePgDb({ max: 4 });
      await migratePostgres(db.db, { table });
      await db.db.execute(sql.raw(`create table "${business}" (id text primary key)`));
    });
    afterAll(async () => {
      await dropRecordsTable(db.db, table, business);
      await db.close();
    });

    const payments = async () =>
      rowsOf<{ n: number }>(
        await db.db.execute(sql.raw(`select count(*)::int as n from "${business}"`)),
      )[0]?.n;

    /** A guarded payment of `key`; its work inserts a row, waits for `during`, and answers. */
    const pay = (key: string, label: string, during?: () => Promise<void>) =>
      createGuard({ store: postgresStore(db.db, { table }) }).run({
        scope: 'acct',
        key,
        fingerprint: 'f',
        operation: 'pay',
        work: async (tx: AnyPgDatabase) => {
          await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${label})`);
          await during?.();
          return label;
        },
      });

    /** A session that holds the request lock of (acct, `key`, f), as an answering duplicate does. */
    async function holdRequestLock(key: string) {
      const session = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await session.connect();
      await session.query('begin');
      await session.query(
        `select pg_advisory_xact_lock(hashtextextended('r' || length($1::text) || ':' || $1
          || length($2::text) || ':' || $2 || $3::text, $4::regclass::oid::bigint))`,
        ['acct', key, 'f', `"${table}"`],
      );
      return async () => {
        await session.query('commit');
        await session.end();
      };
    }

    it("S6/S10: a call whose request lock a duplicate holds answers 409 at once and takes no key, so its request's next call runs and no duplicate of it is told 422", async () => {
      const key = 'held-request';
      const release = await holdRequestLock(key);
      const gate = deferred();
      let first: string;
      try {
        first = await Promise.race([
          outcomeOf(pay(key, 'first', () => gate.promise)),
          sleep(3000).then(() => 'still running'),
        ]);
      } finally {
        await release();
      }
      try {
        expect(first).toBe('IDEMPOTENCY_KEY_IN_USE');
        // The request's lock is free again: its next call claims the key and runs.
        expect(await outcomeOf(pay(key, 'second'))).toBe('fresh:second');
      } finally {
        gate.resolve();
      }
      expect(await outcomeOf(pay(key, 'third'))).toBe('replayed:second');
      expect(await payments()).toBe(1);
    });
  },
);
