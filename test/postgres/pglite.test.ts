/**
 * PGlite's single connection (SPEC S10, S24). A running guarded transaction holds PGlite's
 * only connection, so a nested guarded call (a procedure calling another through
 * `createCaller` inside its work) used to wait for it forever, and every later mutation with
 * it; and a concurrent duplicate used to wait for the original and replay instead of 409.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { createPgliteDb, uniqueTableName } from '../support/postgres.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PGlite (one connection)', () => {
  const table = uniqueTableName('mg_pglite');
  const business = `${table}_business`;
  let opened: ReturnType<typeof createPgliteDb>;
  let db: AnyPgDatabase;
  beforeAll(async () => {
    opened = createPgliteDb();
    db = opened.db;
    await migratePostgres(db, { table });
    await db.execute(sql.raw(`CREATE TABLE "${business}" (id text PRIMARY KEY)`));
  });
  afterAll(async () => {
    await opened.close();
  });

  const guard = () => createGuard({ store: postgresStore(db, { table }) });
  const call = (key: string, work: (tx: AnyPgDatabase) => Promise<string>) => ({
    scope: 'acct',
    key,
    fingerprint: `fp-${key}`,
    operation: 'pay',
    work: work as never,
  });
  const insert = (tx: AnyPgDatabase, id: string) =>
    tx.execute(sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${id})`);
  const ids = async () =>
    rowsOf<{ id: string }>(
      await db.execute(sql`SELECT id FROM ${sql.identifier(business)} ORDER BY id`),
    ).map((row) => row.id);
  const state = async (key: string) =>
    rowsOf<{ state: string }>(
      await db.execute(
        sql`SELECT state FROM ${sql.identifier(table)} WHERE scope = 'acct' AND key = ${key}`,
      ),
    )[0]?.state;

  it('S24: a guarded call nested in guarded work joins the outer transaction: both run once, commit together, and replay', async () => {
    const g = guard();
    const outer = () =>
      g.run(
        call('outer-1', async (tx) => {
          await insert(tx, 'outer-1');
          const inner = await g.run(
            call('inner-1', async (innerTx) => {
              await insert(innerTx, 'inner-1');
              return 'inner';
            }),
          );
          return `outer+${inner.value}`;
        }),
      );
    expect(await outer()).toEqual({ value: 'outer+inner', replayed: false });
    expect(await ids()).toEqual(['inner-1', 'outer-1']);
    expect(await state('outer-1')).toBe('complete');
    expect(await state('inner-1')).toBe('complete');
    expect(await outer()).toEqual({ value: 'outer+inner', replayed: true });
    // The instance is free: a later mutation runs at once.
    expect(await g.run(call('later-1', async () => 'later'))).toEqual({
      value: 'later',
      replayed: false,
    });
  }, 5_000);

  it('S12/S24: a failing nested call rolls back only its own savepoint and frees its key; the outer call commits', async () => {
    const g = guard();
    const result = await g.run(
      call('outer-2', async (tx) => {
        await insert(tx, 'outer-2');
        const inner = await g
          .run(
            call('inner-2', async (innerTx) => {
              await insert(innerTx, 'inner-2');
              throw new Error('declined');
            }),
          )
          .catch((error: Error) => error.message);
        return `outer+${inner}`;
      }),
    );
    expect(result).toEqual({ value: 'outer+declined', replayed: false });
    expect(await ids()).toContain('outer-2');
    expect(await ids()).not.toContain('inner-2');
    expect(await state('inner-2')).toBeUndefined();
  }, 5_000);

  it('S12/S24: when the outer call fails, the nested call it made rolls back with it', async () => {
    const g = guard();
    await expect(
      g.run(
        call('outer-3', async (tx) => {
          await insert(tx, 'outer-3');
          await g.run(
            call('inner-3', async (innerTx) => {
              await insert(innerTx, 'inner-3');
              return 'x';
            }),
          );
          throw new Error('outer failed');
        }),
      ),
    ).rejects.toThrow('outer failed');
    expect(await ids()).not.toContain('inner-3');
    expect(await state('inner-3')).toBeUndefined();
    expect(await state('outer-3')).toBeUndefined();
  }, 5_000);

  it('S10/S24: a nested call with the key of the call running it answers 409 at once', async () => {
    const g = guard();
    const result = await g.run(
      call('outer-4', async () => {
        const inner = await g.run(call('outer-4', async () => 'never')).catch((e) => e);
        return IdempotencyError.is(inner) ? inner.code : 'ran';
      }),
    );
    expect(result.value).toBe('IDEMPOTENCY_KEY_IN_USE');
  }, 5_000);

  it('S10: a concurrent duplicate of a running key gets 409 at once, not a replay after waiting', async () => {
    const g = guard();
    const original = g.run(
      call('slow-1', async (tx) => {
        await insert(tx, 'slow-1');
        await sleep(800);
        return 'original';
      }),
    );
    await sleep(100);
    const started = Date.now();
    const duplicate = await g.run(call('slow-1', async () => 'duplicate')).catch((e) => e);
    const waited = Date.now() - started;
    expect(IdempotencyError.is(duplicate) && duplicate.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(waited).toBeLessThan(300);
    expect(await original).toEqual({ value: 'original', replayed: false });
  }, 5_000);
});
