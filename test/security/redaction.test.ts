/**
 * SPEC S26: nothing a user logs from our errors carries the raw key or the stored result.
 * Drizzle lists every bound parameter in its query errors, pg's `detail` and a trigger's
 * message can hold row values, postgres.js keeps `parameters`: each store failure path is
 * triggered for real, on node-postgres and postgres.js (each also on sessions defaulting to
 * SERIALIZABLE), PGlite and SQLite, every error is printed the ways apps print them, and the
 * output is searched for the key and the result.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { format, inspect } from 'node:util';
import { initTRPC, TRPCError } from '@trpc/server';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createGuard,
  IdempotencyError,
  type IdempotencyStore,
  StoreFailure,
} from '../../src/index.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { migrateSqlite, openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import { idempotency } from '../../src/trpc/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  type TestDbOptions,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();

/** What the procedure returns (or declines with): a card token, say. */
const SECRET_RESULT = `tok_live_${randomBytes(8).toString('hex')}`;
const secretKey = (path: string) => `${path}-${randomBytes(8).toString('hex')}-RAWKEY`;

/** A tRPC app on `store`, called in-process; returns everything a logger would print. */
function app<Tx>(store: IdempotencyStore<Tx>) {
  const guard = createGuard({ store });
  const t = initTRPC.create();
  const router = t.router({
    pay: t.procedure
      .input(z.object({ mode: z.enum(['ok', 'decline', 'throw']), idempotencyKey: z.string() }))
      .concat(
        idempotency({
          guard,
          scope: () => 'acct_1',
          isFinalError: (error) => error.code === 'PAYMENT_REQUIRED',
        }),
      )
      .mutation(({ input }) => {
        if (input.mode === 'decline') {
          throw new TRPCError({ code: 'PAYMENT_REQUIRED', message: `declined ${SECRET_RESULT}` });
        }
        if (input.mode === 'throw') throw new Error('the work failed');
        return { token: SECRET_RESULT };
      }),
  });
  const logged: string[] = [];
  const caller = t.createCallerFactory(router)(
    {},
    {
      // What apps usually do in tRPC's onError.
      onError: ({ error, path }) => {
        logged.push(`tRPC failed on ${path}: ${error.message}`);
        logged.push(format('%o', error));
      },
    },
  );
  /** Calls `pay`; resolves to the error thrown and all the ways of printing it. */
  async function fail(mode: 'ok' | 'decline' | 'throw', key: string) {
    logged.length = 0;
    const error = await caller.pay({ mode, idempotencyKey: key }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const printed = [
      ...logged,
      inspect(error, { depth: Number.POSITIVE_INFINITY }),
      inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
      String(error),
      format('%s', error),
      JSON.stringify(error),
    ];
    for (let link: unknown = error; link; link = (link as Error).cause) {
      printed.push(String(link), String((link as Error).stack), JSON.stringify(link));
    }
    return { error: error as TRPCError, printed: printed.join('\n') };
  }
  return { fail };
}

function expectRedacted(printed: string, key: string): void {
  expect(printed).not.toContain(key);
  expect(printed).not.toContain(key.slice(0, -'-RAWKEY'.length));
  expect(printed).not.toContain(SECRET_RESULT);
}

function storeFailureOf(error: TRPCError): StoreFailure {
  expect(error.code).toBe('SERVICE_UNAVAILABLE');
  const cause = error.cause as IdempotencyError;
  expect(IdempotencyError.is(cause)).toBe(true);
  expect(cause.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
  expect(StoreFailure.is(cause.cause)).toBe(true);
  return cause.cause as StoreFailure;
}

/** A TCP port on loopback with nothing listening. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Triggers that fail our statements for keys with a given prefix, naming the values.
 *
 * The store claims in the business transaction: `<table>_begin` only reads, and the record
 * is written once, complete, by `<table>_finish`'s INSERT, just before COMMIT, after the work
 * (on a node-postgres Pool, in the query that carries the COMMIT, its values written into the
 * SQL as literals). So the first write of a key, the claim's as much as the completion's, is
 * that INSERT, and a completion refused there fails where the store completes.
 */
function postgresTriggers(table: string): string[] {
  // One statement per string: PGlite's prepared statements take one at a time.
  return [
    `
    create function ${table}_fail() returns trigger language plpgsql as $$
    begin
      if tg_op in ('INSERT', 'UPDATE') and new.key like 'fail-complete%' then
        raise exception 'completion refused for key % with %', new.key, new.result
          using detail = new.result, errcode = '23514';
      end if;
      if tg_op = 'INSERT' and new.key like 'fail-claim%' then
        raise exception 'claim refused for key %', new.key
          using detail = 'key=' || new.key, errcode = '23514';
      end if;
      return coalesce(new, old);
    end $$`,
    `create trigger ${table}_fail before insert or update on ${table}
      for each row execute function ${table}_fail()`,
  ];
}

/**
 * The three drivers, and the two that reach a server again on sessions defaulting to
 * SERIALIZABLE (S24: the store's statements fail the same way under a stricter default, and
 * are scrubbed the same way). PGlite runs in process (one connection, no network to lose).
 */
const serializable =
  (create: typeof createNodePgDb | typeof createPostgresJsDb) =>
  (options: TestDbOptions = {}) =>
    create({ ...options, defaultIsolation: 'serializable' });
const drivers = [
  { driver: 'node-postgres', createDb: createNodePgDb, inProcess: false },
  { driver: 'postgres.js', createDb: createPostgresJsDb, inProcess: false },
  {
    driver: 'node-postgres, default serializable',
    createDb: serializable(createNodePgDb),
    inProcess: false,
    isolation: 'serializable',
  },
  {
    driver: 'postgres.js, default serializable',
    createDb: serializable(createPostgresJsDb),
    inProcess: false,
    isolation: 'serializable',
  },
  { driver: 'PGlite', createDb: (_: TestDbOptions = {}) => createPgliteDb(), inProcess: true },
] as const;

for (const driverCase of drivers) {
  const { driver, createDb, inProcess } = driverCase;
  const isolation = 'isolation' in driverCase ? driverCase.isolation : undefined;
  const skip = !inProcess && !pg.realPostgres;
  describe.skipIf(skip)(
    `S26 on ${driver}: store errors carry no raw key or result ${skip ? pg.skipReason : ''}`,
    () => {
      const table = uniqueTableName(`s26_${driver}`);
      const { db, close } = createDb({ max: 3 });
      const ready = (async () => {
        await migratePostgres(db, { table });
        for (const statement of postgresTriggers(table)) await db.execute(sql.raw(statement));
      })();
      const { fail } = app(postgresStore(db, { table }));
      afterAll(async () => {
        await dropRecordsTable(db, table);
        await db.execute(sql.raw(`drop function if exists ${table}_fail()`));
        await close();
      });

      if (isolation) {
        // Without this the cases below could pass on the server's default and prove nothing.
        it(`S24: the sessions default to ${isolation}`, async () => {
          const result = await db.execute(sql.raw('show default_transaction_isolation'));
          const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
          expect(rows[0]).toEqual({ default_transaction_isolation: isolation });
        });
      }

      it('S26, S15: a failed claim answers 503 with the SQLSTATE, and prints no key', async () => {
        await ready;
        const key = secretKey('fail-claim');
        const { error, printed } = await fail('ok', key);
        expect(storeFailureOf(error).code).toBe('23514');
        expectRedacted(printed, key);
      });

      it('S26, S15: a claim refused before the work (its function failing with the key in its message) answers 503 and prints no key', async () => {
        await ready;
        // A table of its own whose `_begin` refuses, naming the key: the claim is that
        // function's call, before any write.
        const refusing = `${table}_b`;
        await migratePostgres(db, { table: refusing });
        await db.execute(sql.raw(`drop function "${refusing}_begin"(text, text, text)`));
        await db.execute(
          sql.raw(`create function "${refusing}_begin"(p_scope text, p_key text, p_fingerprint text)
            returns table (status text) language plpgsql as $$
            begin
              raise exception 'claim refused for key %', p_key
                using detail = 'key=' || p_key, errcode = '23514';
            end $$`),
        );
        try {
          const { fail: failRefused } = app(postgresStore(db, { table: refusing }));
          const key = secretKey('refused');
          const { error, printed } = await failRefused('ok', key);
          const failure = storeFailureOf(error);
          expect(failure.code).toBe('23514');
          expect(failure.message).toContain('claim refused for key [redacted]');
          expectRedacted(printed, key);
        } finally {
          await dropRecordsTable(db, refusing);
        }
      });

      it('S26, S8: a failed completion inside the transaction prints neither key nor result', async () => {
        await ready;
        const key = secretKey('fail-complete');
        const { error, printed } = await fail('ok', key);
        const failure = storeFailureOf(error);
        expect(failure.code).toBe('23514');
        expect(failure.message).toContain('completion refused for key [redacted] with [redacted]');
        expectRedacted(printed, key);
      });

      it('S26, S8: a key with a quote and a backslash is printed in no form, quoted or raw, when its completion fails', async () => {
        await ready;
        // The store writes values into some statements as quoted literals ('' and \\): the
        // failure must not carry the statement.
        const key = secretKey("fail-complete-q'\\");
        const { error, printed } = await fail('ok', key);
        expect(storeFailureOf(error).code).toBe('23514');
        expectRedacted(printed, key);
        expect(printed).not.toContain('RAWKEY');
      });

      it('S26, S12: a failed completion of a kept final error prints neither key nor result', async () => {
        await ready;
        const key = secretKey('fail-complete-kept');
        const { error, printed } = await fail('decline', key);
        const failure = storeFailureOf(error);
        expect(failure.code).toBe('23514');
        // The database's message held the key and the stored answer (the declined error,
        // serialized), and both were scrubbed.
        expect(failure.message).toContain('completion refused for key [redacted] with [redacted]');
        expectRedacted(printed, key);
      });

      it('S26, S15: a closed pool answers 503 and prints no key', async () => {
        await ready;
        const closed = createDb({ max: 1 });
        if (inProcess) await migratePostgres(closed.db, { table });
        await closed.close();
        const { fail: failClosed } = app(postgresStore(closed.db, { table }));
        const key = secretKey('closed');
        const { error, printed } = await failClosed('ok', key);
        storeFailureOf(error);
        expectRedacted(printed, key);
      });

      it.skipIf(inProcess)(
        'S26, S15: an unreachable server answers 503 with the connection error code and prints no key (PGlite: no server to reach)',
        async () => {
          const port = await deadPort();
          const url = TEST_DATABASE_URL.replace(/:\d+\//, `:${port}/`);
          const unreachable = createDb({ max: 1, url });
          try {
            const { fail: failUnreachable } = app(postgresStore(unreachable.db, { table }));
            const key = secretKey('unreachable');
            const { error, printed } = await failUnreachable('ok', key);
            expect(storeFailureOf(error).code).toBe('ECONNREFUSED');
            expectRedacted(printed, key);
          } finally {
            await unreachable.close().catch(() => undefined);
          }
        },
      );
    },
  );
}

describe('S26 on SQLite: store errors carry no raw key or result', () => {
  const db = openSqlite(':memory:');
  migrateSqlite(db);
  db.$client.exec(`
    create trigger fail_complete before insert on idempotency_records
      when new.key like 'fail-complete%'
      begin select raise(abort, 'completion refused'); end;`);
  const { fail } = app(sqliteStore(db));

  // The claim writes nothing (the record is written once, complete, before COMMIT): a claim
  // that fails is the closed database below.
  const paths = [
    ['a failed completion inside the transaction', 'fail-complete', 'ok'],
    ['a failed completion of a kept final error', 'fail-complete-kept', 'decline'],
  ] as const;
  for (const [name, prefix, mode] of paths) {
    it(`S26, S15: ${name} answers 503 with the driver code and prints neither key nor result`, async () => {
      const key = secretKey(prefix);
      const { error, printed } = await fail(mode, key);
      expect(storeFailureOf(error).code).toMatch(/^SQLITE_CONSTRAINT/);
      expectRedacted(printed, key);
    });
  }

  it('S26, S15: a closed database answers 503 and prints no key', async () => {
    const closed = openSqlite(':memory:');
    migrateSqlite(closed);
    const { fail: failClosed } = app(sqliteStore(closed));
    closed.$client.close();
    const key = secretKey('closed');
    const { error, printed } = await failClosed('ok', key);
    storeFailureOf(error);
    expectRedacted(printed, key);
  });
});
