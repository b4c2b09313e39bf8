/**
 * The one-transaction claim's answer (SPEC S7, S15, S22, S26): `<table>_begin` answers with one
 * JSON value as text (drizzle/postgres/0002_one_transaction.sql says why), which the store reads
 * the same way on every driver.
 *
 * - the answer is read as it was written; one of another shape is an error that says what to
 *   do, and never repeats the answer (it may hold a stored result);
 * - a table whose `_begin` still has the shape it had during 0.2.0's development (a function
 *   returning a row of columns) makes guarded calls fail closed, with nothing run and nothing
 *   written, until `postgresFunctionsSql()` is applied again over it, which then works: on
 *   node-postgres, postgres.js (each again on sessions defaulting to SERIALIZABLE) and PGlite.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { functionNames } from '../../src/postgres/functions.js';
import {
  type AnyPgDatabase,
  migratePostgres,
  postgresFunctionsSql,
  postgresStore,
} from '../../src/postgres/index.js';
import { BEGIN_ANSWER, beginRowOf } from '../../src/postgres/statements.js';
import { BREAKPOINT } from '../../src/store/migrations.js';
import {
  createPgliteDb,
  dropRecordsTable,
  postgresAvailability,
  SERVER_DRIVERS,
  type TestDb,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();

describe("the begin function's answer, read", () => {
  it('S7: reads the status, the replace flag and the record that stands, numbers and text as written', () => {
    const record = {
      status: 'exists',
      replace: false,
      fingerprint: 'f',
      operation: 'pay',
      state: 'complete',
      outcome: 'committed',
      result: '{"id":1,"note":"quote \\" and \\\\ and é"}',
      lease_expires_ms: null,
      expires_ms: 1796179200123.5,
      created_ms: 1796092800000.25,
      read_ms: 1796092800001,
    };
    expect(beginRowOf({ [BEGIN_ANSWER]: JSON.stringify(record) })).toEqual(record);
    expect(beginRowOf({ [BEGIN_ANSWER]: '{"status":"claimed","replace":false}' })).toEqual({
      status: 'claimed',
      replace: false,
    });
  });

  it('no row, or a row without the answer: undefined (the caller says which statement did not answer)', () => {
    expect(beginRowOf(undefined)).toBeUndefined();
    expect(beginRowOf({ other: 1 })).toBeUndefined();
  });

  it('S22/S26: an answer of another shape is an error that says what to do and does not repeat it', () => {
    for (const answer of ['(claimed,f)', '"claimed"', '{"replace":false}', 'null', 42, null]) {
      let thrown: unknown;
      try {
        beginRowOf({ [BEGIN_ANSWER]: answer });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(Error);
      const { message } = thrown as Error;
      expect(message).toMatch(/0002_one_transaction.*postgresFunctionsSql/);
      expect(message).not.toContain('claimed');
    }
  });
});

const drivers = [
  ...(pg.realPostgres ? SERVER_DRIVERS : []),
  { name: 'PGlite', open: () => createPgliteDb() as TestDb<AnyPgDatabase> },
];

for (const driver of drivers) {
  describe(`${driver.name}: a begin function of the development shape`, () => {
    const table = uniqueTableName('begin_shape');
    let database: TestDb<AnyPgDatabase>;

    beforeAll(async () => {
      database = driver.open();
      await migratePostgres(database.db, { table });
      // As during 0.2.0's development: the claim as a function returning a row of columns.
      const begin = functionNames(table).begin;
      await database.db.execute(sql.raw(`drop function "${begin}"(text, text, text)`));
      await database.db.execute(
        sql.raw(`create function "${begin}"(p_scope text, p_key text, p_fingerprint text)
          returns table (status text, replace boolean) language plpgsql as $$
          begin status := 'claimed'; replace := false; return next; end $$`),
      );
    });
    afterAll(async () => {
      await dropRecordsTable(database.db, table);
      await database.close();
    });

    const records = async () =>
      rowsOf<{ n: number }>(
        await database.db.execute(sql.raw(`select count(*)::int as n from "${table}"`)),
      )[0]!.n;

    it('S15/S22: a guarded call fails closed and says to apply the migration again; postgresFunctionsSql() applies over it, and then calls run and replay', async () => {
      const guard = createGuard({ store: postgresStore(database.db, { table }) });
      let ran = 0;
      const pay = () =>
        guard.run({
          scope: 's',
          key: 'k1',
          fingerprint: 'f',
          operation: 'pay',
          work: async () => ++ran,
        });

      const refused = await pay().catch((error: unknown) => error);
      expect(IdempotencyError.is(refused) && refused.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
      expect(String((refused as Error).cause)).toMatch(
        /shape this version does not read.*0002_one_transaction/,
      );
      expect(ran).toBe(0);
      expect(await records()).toBe(0);

      const functionsSql = await postgresFunctionsSql({ table });
      for (const statement of functionsSql.split(BREAKPOINT)) {
        if (statement.trim()) await database.db.execute(sql.raw(statement));
      }
      expect(await pay()).toEqual({ value: 1, replayed: false });
      expect(await pay()).toEqual({ value: 1, replayed: true });
      expect(ran).toBe(1);
      expect(await records()).toBe(1);
    });
  });
}
