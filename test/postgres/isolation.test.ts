/**
 * A server whose `default_transaction_isolation` is stricter than READ COMMITTED (SPEC S24):
 * the store's own statements outside its transaction (the claim above all) then run at that
 * level, where concurrent duplicates make Postgres answer 40001 (serialization failure).
 * Callers must get the same answers as under READ COMMITTED: one run per key, 409 or a
 * replay for the duplicates, never 503.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  type TestDb,
  type TestDbOptions,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const KEYS = 40;
const DUPLICATES = 12;

const drivers: { name: string; open: (o: TestDbOptions) => TestDb<AnyPgDatabase> }[] = [
  { name: 'node-postgres', open: (o) => createNodePgDb(o) },
  { name: 'postgres.js', open: (o) => createPostgresJsDb(o) },
];

for (const driver of drivers) {
  for (const level of ['serializable', 'repeatable read'] as const) {
    describe.skipIf(!pg.realPostgres)(
      `${driver.name} on a server defaulting to ${level}${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
      () => {
        const table = uniqueTableName('mg_iso');
        const business = `${table}_business`;
        let opened: TestDb<AnyPgDatabase>;
        beforeAll(async () => {
          opened = driver.open({ defaultIsolation: level, max: 10 });
          await migratePostgres(opened.db, { table });
          await opened.db.execute(sql.raw(`CREATE TABLE "${business}" (id text)`));
        });
        afterAll(async () => {
          await dropRecordsTable(opened.db, table, business);
          await opened.close();
        });

        it(`S7/S10/S24: ${KEYS} keys x ${DUPLICATES} concurrent duplicates: each key runs once, the rest get 409 or a replay, never 503`, async () => {
          const [row] = rowsOf<{ level: string }>(
            await opened.db.execute(
              sql`select current_setting('default_transaction_isolation') as level`,
            ),
          );
          expect(row?.level).toBe(level);
          const guard = createGuard({ store: postgresStore(opened.db, { table }) });
          const runs = new Map<string, number>();
          const outcomes = await Promise.all(
            Array.from({ length: KEYS * DUPLICATES }, (_, i) => {
              // Duplicates side by side, so that they reach the pool together.
              const key = `key-${Math.floor(i / DUPLICATES)}`;
              return guard
                .run({
                  scope: 'acct',
                  key,
                  fingerprint: 'fp',
                  operation: 'pay',
                  work: async (tx) => {
                    runs.set(key, (runs.get(key) ?? 0) + 1);
                    await tx.execute(
                      sql`INSERT INTO ${sql.identifier(business)} (id) VALUES (${key})`,
                    );
                    return key;
                  },
                })
                .then((r) => (r.replayed ? 'replayed' : 'fresh'))
                .catch((e) => (IdempotencyError.is(e) ? e.code : `unexpected: ${e}`));
            }),
          );
          const unexpected = outcomes.filter(
            (o) => !['fresh', 'replayed', 'IDEMPOTENCY_KEY_IN_USE'].includes(o),
          );
          expect(unexpected).toEqual([]);
          expect(outcomes.filter((o) => o === 'fresh')).toHaveLength(KEYS);
          expect([...runs.values()].every((n) => n === 1)).toBe(true);
        }, 60_000);
      },
    );
  }
}
