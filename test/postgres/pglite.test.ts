/**
 * PGlite's single connection (SPEC S10, S24). A running guarded transaction holds PGlite's
 * only connection, so a concurrent duplicate used to wait for the original and replay instead
 * of 409. (Guarded calls nested in guarded work, which would wait for that connection
 * forever, are the conformance suite's rules on every driver: test/conformance/nesting.ts.)
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
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
