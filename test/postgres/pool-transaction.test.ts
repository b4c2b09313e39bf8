/**
 * node-postgres Pool: the guarded transaction the store runs itself (src/postgres/pool-transaction.ts),
 * BEGIN merged with the claim and the record with COMMIT (SPEC S4, S7, S8, S9, S12, S15, S22).
 *
 * - the round trips a fresh call and a replay take, as docs/postgres.md states them;
 * - the primary key still decides when the completion rides on COMMIT: a record committed for
 *   the key meanwhile rolls the transaction back, whatever the work wrote;
 * - a kept final error is written after a rollback to the work's savepoint, in the same
 *   transaction;
 * - the merged queries carry their values as literals: scopes and keys with quotes,
 *   backslashes and dollar signs arrive intact, also on sessions with
 *   `standard_conforming_strings` off (where a backslash in a plain literal escapes);
 * - a records table without its functions fails closed, and says which and how to add them.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError, rollback } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { functionNames } from '../../src/postgres/functions.js';
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
  `node-postgres pool: BEGIN with the claim, the record with COMMIT${pg_.skipReason ? ` (${pg_.skipReason})` : ''}`,
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

    it('S8/S9: a fresh call is three round trips (BEGIN with the claim and the savepoint; the work; the record with COMMIT), a replay is answered after the first', async () => {
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
      expect(fresh).toHaveLength(3);
      expect(fresh[0]).toMatch(
        /^begin isolation level read committed; select "public"."[^"]+_begin"\(.*\) as mutation_guard_begin; savepoint mutation_guard_work$/s,
      );
      expect(fresh[1]).toMatch(/^insert into/);
      expect(fresh[2]).toMatch(/^select 1 \/ \("public"\."[^"]+_finish"\(.*\)\)::int; commit$/s);

      CountingClient.sent = [];
      expect(await guard.run(call)).toEqual({ value: 'paid', replayed: true });
      // The answer came with the first query; the empty transaction's ROLLBACK goes after it.
      expect(CountingClient.sent).toHaveLength(2);
      expect(CountingClient.sent[1]).toBe('rollback');
      expect(await count('round-trips')).toBe(1);
    });

    it('S7/S8: a record committed for the key while the transaction ran (as where advisory locks do nothing) fails the record sent with COMMIT: 409, nothing of the work commits', async () => {
      const store = postgresStore(db, { table });
      const guard = createGuard({ store });
      const key = 'committed-meanwhile';
      const outcome = await guard
        .run({
          scope: 'acct',
          key,
          fingerprint: 'f',
          operation: 'pay',
          work: async (tx: PgTransactionOf<typeof db>) => {
            await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${key})`);
            // Another session commits a record for the key: the primary key must decide.
            await db.execute(sql`
              insert into ${sql.identifier(table)}
                (scope, key, fingerprint, operation, outcome, result, expires_at, completed_at)
              values ('acct', ${key}, 'f', 'pay', 'committed', '"theirs"',
                now() + interval '1 hour', now())`);
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
      // The record that won stands, and a retry replays it.
      expect(await store.read({ scope: 'acct', key })).toMatchObject({ result: '"theirs"' });
    });

    it('S12: a kept final error rolls the work back to its savepoint and commits the record in the same transaction', async () => {
      const store = postgresStore(db, { table });
      const guard = createGuard({ store });
      const key = 'kept-error';
      let runs = 0;
      const call = {
        scope: 'acct',
        key,
        fingerprint: 'f',
        operation: 'pay',
        work: async (tx: PgTransactionOf<typeof db>) => {
          runs++;
          await tx.execute(sql`insert into ${sql.identifier(business)} (id) values (${key})`);
          return rollback({ declined: true }, { keep: true });
        },
      };
      expect(await guard.run(call)).toEqual({ value: { declined: true }, replayed: false });
      expect(CountingClient.sent.at(-1)).toMatch(
        /^rollback to savepoint mutation_guard_work; select 1 \/ \("public"\."[^"]+_finish"\(.*\)\)::int; commit$/s,
      );
      expect(await count(key)).toBe(0);
      expect(await store.read({ scope: 'acct', key })).toMatchObject({ outcome: 'rolled_back' });
      expect(await guard.run(call)).toEqual({ value: { declined: true }, replayed: true });
      expect(runs).toBe(1);
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
          result: JSON.stringify(stored),
        });
      });
    }

    it('S15/S22: a records table without its functions fails closed, and the error says which and how to add it', async () => {
      const bare = uniqueTableName('pool_tx_bare');
      await migratePostgres(db, { table: bare });
      // A guarded call's first statement is the claim, `<table>_begin`, sent with BEGIN in the
      // transaction's first query.
      await db.execute(sql.raw(`drop function "${functionNames(bare).begin}"`));
      try {
        const guard = createGuard({ store: postgresStore(db, { table: bare }) });
        let ran = false;
        const failure = await guard
          .run({
            scope: 'acct',
            key: 'k3',
            fingerprint: 'f',
            operation: 'pay',
            work: async () => {
              ran = true;
              return 1;
            },
          })
          .catch((error: unknown) => error);
        expect(ran).toBe(false);
        expect(IdempotencyError.is(failure)).toBe(true);
        expect((failure as IdempotencyError).code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(String((failure as Error).cause)).toContain(
          `has no function "${functionNames(bare).begin}"`,
        );
        expect(String((failure as Error).cause)).toContain('migratePostgres');
        // S26: the raw key is in no part of what reaches the app.
        expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain('k3');
      } finally {
        await dropRecordsTable(db, bare);
      }
    });
  },
);
