/**
 * node-postgres Pool: the guarded transaction the store runs itself (src/postgres/pool-transaction.ts),
 * BEGIN merged with the lock and the fenced completion with COMMIT (SPEC S4, S8).
 *
 * - the round trips a fresh call and a replay take, as docs/postgres.md states them;
 * - the fence still holds when the completion rides on COMMIT: a record that changed under
 *   the transaction rolls it back, whatever the work wrote;
 * - the merged queries carry their values as literals: scopes and keys with quotes,
 *   backslashes and dollar signs arrive intact, also on sessions with
 *   `standard_conforming_strings` off (where a backslash in a plain literal escapes).
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { migratePostgres, type PgTransactionOf, postgresStore } from '../../src/postgres/index.js';
import {
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  uniqueTableName,
} from '../support/postgres.js';

const pg_ = await postgresAvailability();

/** A pg.Client that notes the text of every query it sends. */
class CountingClient extends pg.Client {
  static sent: string[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloaded query signature.
  override query(...args: any[]): any {
    const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
    CountingClient.sent.push(String(text));
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (super.query as any)(...args);
  }
}

describe.skipIf(!pg_.realPostgres)(
  `node-postgres pool: BEGIN with the lock, the completion with COMMIT${pg_.skipReason ? ` (${pg_.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('pool_tx');
    const business = `${table}_business`;
    const pools = {
      counting: new pg.Pool({
        connectionString: TEST_DATABASE_URL,
        max: 2,
        Client: CountingClient,
      }),
      // A backslash in a plain '...' literal escapes the next character on these sessions.
      oldStrings: new pg.Pool({
        connectionString: TEST_DATABASE_URL,
        max: 2,
        options: '-c standard_conforming_strings=off',
      }),
    };
    const db = drizzle({ client: pools.counting });
    const oldStringsDb = drizzle({ client: pools.oldStrings });

    beforeAll(async () => {
      await migratePostgres(db, { table });
      await db.execute(sql.raw(`create table "${business}" (id text primary key)`));
    });
    afterAll(async () => {
      await dropRecordsTable(db, table, business);
      await Promise.all([pools.counting.end(), pools.oldStrings.end()]);
    });
    beforeEach(() => {
      CountingClient.sent = [];
    });

    const count = async (id: string) =>
      rowsOf<{ n: number }>(
        await db.execute(
          sql`select count(*)::int as n from ${sql.identifier(business)} where id = ${id}`,
        ),
      )[0]?.n;

    it('S8: a fresh call is four round trips (claim; BEGIN with the lock; the work; the completion with COMMIT), a replay one', async () => {
      const guard = createGuard({ store: postgresStore(db, { table }) });
      const call = {
        scope: 'acct',
        key: 'round-trips',
        fingerprint: 'f',
        operation: 'pay',
        work: async (tx: PgTransactionOf<typeof db>) => {
          await tx.execute(
            sql`insert into ${sql.identifier(business)} (id) values ('round-trips')`,
          );
          return 'paid';
        },
      };
      expect(await guard.run(call)).toEqual({ value: 'paid', replayed: false });
      const fresh = CountingClient.sent;
      expect(fresh).toHaveLength(4);
      expect(fresh[0]).toMatch(/_claim"/);
      expect(fresh[1]).toMatch(
        /^begin isolation level read committed; select 1 from "[^"]+_lock"\(/,
      );
      expect(fresh[2]).toMatch(/^insert into/);
      expect(fresh[3]).toMatch(/^select 1 \/ \("[^"]+_complete"\(.*\)\)::int; commit$/s);

      CountingClient.sent = [];
      expect(await guard.run(call)).toEqual({ value: 'paid', replayed: true });
      expect(CountingClient.sent).toHaveLength(1);
      expect(await count('round-trips')).toBe(1);
    });

    it('S8: a record that changed under the transaction fails the completion sent with COMMIT: 409, nothing of the work commits', async () => {
      const store = postgresStore(db, { table });
      const guard = createGuard({ store });
      const key = 'changed-under';
      const outcome = await guard
        .run({
          scope: 'acct',
          key,
          fingerprint: 'f',
          operation: 'pay',
          work: async (tx: PgTransactionOf<typeof db>) => {
            await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${key})`);
            // What no other session can do while the lock is held: the token moves on.
            await tx.execute(
              sql`update ${sql.identifier(table)} set token = 'someone-else' where scope = 'acct' and key = ${key}`,
            );
            return 'paid';
          },
        })
        .then(
          () => 'committed',
          (error: unknown) => (IdempotencyError.is(error) ? error.code : String(error)),
        );
      expect(outcome).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(CountingClient.sent.some((text) => text === 'rollback')).toBe(true);
      expect(await count(key)).toBe(0);
      // The claim as the rollback left it: in flight under the original token, waiting for its
      // lease (the guard frees no claim it believes taken over); never completed.
      const record = await store.read({ scope: 'acct', key });
      expect(record?.state).toBe('in_flight');
      const [row] = rowsOf<{ token: string }>(
        await db.execute(
          sql`select token from ${sql.identifier(table)} where scope = 'acct' and key = ${key}`,
        ),
      );
      expect(row?.token).not.toBe('someone-else');
    });

    for (const [name, handle] of [
      ['standard strings', () => db],
      ['standard_conforming_strings off', () => oldStringsDb],
    ] as const) {
      it(`S4/S8: scopes and keys with quotes, backslashes and dollar signs arrive intact (${name})`, async () => {
        const store = postgresStore(handle(), { table });
        const guard = createGuard({ store });
        const scope = `tenant 'ö' \\' \\\\ $$ "x"`;
        const key = `k'\\'\\\\$$"${name.length}`;
        const call = (value: string) => ({
          scope,
          key,
          fingerprint: 'f',
          operation: 'pay',
          work: async () => value,
        });
        const outcomes = await Promise.all(
          ['first', 'second'].map((value) =>
            guard.run(call(value)).catch((error: unknown) => error),
          ),
        );
        const ran = outcomes.filter(
          (outcome) => (outcome as { replayed?: boolean }).replayed === false,
        ) as { value: string }[];
        expect(ran).toHaveLength(1);
        const stored = ran[0]!.value;
        // The duplicate, at once: told the key is in flight (409), or given the stored result.
        for (const outcome of outcomes) {
          if (IdempotencyError.is(outcome)) expect(outcome.code).toBe('IDEMPOTENCY_KEY_IN_USE');
          else expect((outcome as { value: string }).value).toBe(stored);
        }
        expect(await guard.run(call('again'))).toEqual({ value: stored, replayed: true });
        expect(await store.read({ scope, key })).toMatchObject({
          scope,
          key,
          state: 'complete',
          result: JSON.stringify(stored),
        });
      });
    }
  },
);
