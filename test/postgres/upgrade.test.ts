/**
 * Upgrading a database that 0.1.0 migrated (SPEC S22, S24): its table and bookkeeping hold
 * only `0000_init`, and its records were written by 0.1.0. Until `migratePostgres` has
 * added the store's functions (`0001_functions`), a guarded mutation fails closed and says
 * why; afterwards the records 0.1.0 left behave as they did: a complete result replays, a
 * live in-flight claim answers 409, an expired record counts as absent, another fingerprint
 * gets 422. On every driver, with duplicates fired at once after the upgrade.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError, jsonSerializer } from '../../src/index.js';
import { type AnyPgDatabase, migratePostgres, postgresStore } from '../../src/postgres/index.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();

type Answer = { value: unknown; replayed: boolean } | string;

const drivers = [
  { name: 'node-postgres', create: () => createNodePgDb(), needsServer: true },
  { name: 'postgres.js', create: () => createPostgresJsDb(), needsServer: true },
  { name: 'PGlite', create: () => createPgliteDb(), needsServer: false },
] as const;

/** What 0.1.0's migratePostgres left: the table from 0000_init and its bookkeeping row. */
async function migrateAs010(db: AnyPgDatabase, table: string): Promise<void> {
  const file = new URL('../../drizzle/postgres/0000_init.sql', import.meta.url);
  const text = readFileSync(file, 'utf8');
  for (const statement of text.split('--> statement-breakpoint')) {
    await db.execute(sql.raw(statement.replaceAll('"idempotency_records', `"${table}`)));
  }
  await db.execute(
    sql.raw(`create table "${table}_migrations" (tag text primary key, hash text not null,
      applied_at timestamptz not null default now())`),
  );
  const hash = createHash('sha256').update(text).digest('hex');
  await db.execute(
    sql`insert into ${sql.identifier(`${table}_migrations`)} (tag, hash) values ('0000_init', ${hash})`,
  );
}

/** A record as 0.1.0's store wrote it. */
async function record010(
  db: AnyPgDatabase,
  table: string,
  row: { key: string; state: 'in_flight' | 'complete'; result?: unknown; expiresIn: string },
): Promise<void> {
  const result = row.result === undefined ? null : jsonSerializer.stringify(row.result);
  await db.execute(sql`
    insert into ${sql.identifier(table)}
      (scope, key, fingerprint, operation, state, token, outcome, result, lease_expires_at, expires_at)
    values ('acct', ${row.key}, 'fp', 'pay', ${row.state},
      ${row.state === 'in_flight' ? 'old-token' : null},
      ${row.state === 'complete' ? 'committed' : null}, ${result},
      ${row.state === 'in_flight' ? sql`now() + interval '1 minute'` : null},
      now() + ${row.expiresIn}::interval)`);
}

for (const driver of drivers) {
  const skip = driver.needsServer && !pg.realPostgres;
  describe.skipIf(skip)(
    `upgrading a 0.1.0 database on ${driver.name}${skip ? ` (${pg.skipReason})` : ''}`,
    () => {
      const table = uniqueTableName(`mg_upgrade_${driver.name.replace(/\W/g, '')}`);
      let opened: ReturnType<(typeof drivers)[number]['create']>;
      let db: AnyPgDatabase;
      beforeAll(async () => {
        opened = driver.create();
        db = opened.db as AnyPgDatabase;
        await migrateAs010(db, table);
        await record010(db, table, {
          key: 'paid',
          state: 'complete',
          result: { id: 'p1' },
          expiresIn: '1 day',
        });
        await record010(db, table, { key: 'running', state: 'in_flight', expiresIn: '1 day' });
        await record010(db, table, {
          key: 'expired',
          state: 'complete',
          result: { id: 'old' },
          expiresIn: '-1 second',
        });
      }, 60_000);
      afterAll(async () => {
        if (!opened) return;
        await dropRecordsTable(db, table);
        await opened.close();
      });

      it('S22/S24: before the upgrade a guarded call fails closed and names the missing functions; migratePostgres applies only 0001_functions; 0.1.0 records then answer as before', async () => {
        const guard = createGuard({ store: postgresStore(db, { table }) });
        let runs = 0;
        const pay = (key: string, fingerprint = 'fp') =>
          guard
            .run({
              scope: 'acct',
              key,
              fingerprint,
              operation: 'pay',
              work: async () => {
                runs++;
                return { id: `new-${key}` };
              },
            })
            .then(
              (r): Answer => ({ value: r.value, replayed: r.replayed }),
              (e): Answer => (IdempotencyError.is(e) ? e.code : `unexpected: ${e}`),
            );

        const before = await guard
          .run({
            scope: 'acct',
            key: 'paid',
            fingerprint: 'fp',
            operation: 'pay',
            work: async () => 0,
          })
          .catch((error: unknown) => error);
        expect(IdempotencyError.is(before) && before.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(String((before as Error).cause)).toMatch(
          new RegExp(`has no function "${table}_claim".*migratePostgres`),
        );
        expect(runs).toBe(0);

        expect(await migratePostgres(db, { table })).toEqual({ applied: ['0001_functions'] });
        expect(await migratePostgres(db, { table })).toEqual({ applied: [] });

        // Duplicates of each key at once, as retries arrive.
        const answers = await Promise.all(
          ['paid', 'running', 'expired', 'fresh'].flatMap((key) => [pay(key), pay(key), pay(key)]),
        );
        const [paid, running, expired, fresh] = [0, 3, 6, 9].map((i) =>
          answers.slice(i, i + 3),
        ) as [Answer[], Answer[], Answer[], Answer[]];
        expect(paid).toEqual(Array(3).fill({ value: { id: 'p1' }, replayed: true }));
        expect(running).toEqual(Array(3).fill('IDEMPOTENCY_KEY_IN_USE'));
        for (const group of [expired, fresh]) {
          const ran = group.filter((a) => typeof a === 'object' && !a.replayed);
          expect(ran).toHaveLength(1);
          // The others are told it is in flight, or (once it committed) replay it.
          for (const other of group.filter((a) => !ran.includes(a))) {
            expect(
              other === 'IDEMPOTENCY_KEY_IN_USE' || (other as { replayed: boolean }).replayed,
            ).toBe(true);
          }
        }
        expect(runs).toBe(2);
        expect(await pay('paid', 'another')).toBe('IDEMPOTENCY_KEY_REUSED');
        expect(await pay('expired')).toEqual({ value: { id: 'new-expired' }, replayed: true });
      });
    },
  );
}
