/**
 * Upgrading a database an earlier version migrated (SPEC S22, S24), on every driver, with
 * duplicates fired at once after the upgrade:
 *
 * - from 0.1.0: its table and bookkeeping hold only `0000_init`, and its records were written
 *   by 0.1.0. `migratePostgres` applies `0001_functions` and `0002_one_transaction`;
 * - from the lease model's version: its bookkeeping holds `0000_init` and `0001_functions`
 *   (the lease functions `<table>_claim`, `_lock`, `_complete`, `_release`), and its records
 *   were written through them. `migratePostgres` applies only `0002_one_transaction`.
 *
 * Until the upgrade has added `<table>_begin`, the one-transaction claim every guarded call
 * starts with, a guarded mutation fails closed and names it; afterwards the records left
 * behave as they did: a complete result replays, a live in-flight claim answers 409 (and its
 * original may still complete it), an expired lease is taken over by the same request, an
 * expired record counts as absent, another fingerprint gets 422.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGuard,
  type Guard,
  IdempotencyError,
  type IdempotencyStore,
  jsonSerializer,
} from '../../src/index.js';
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

/**
 * What an earlier version's migratePostgres left: the shipped migrations `tags`, renamed for
 * `table`, and a bookkeeping row for each (its hash as migratePostgres computes it).
 */
async function migrateAsEarlier(db: AnyPgDatabase, table: string, tags: string[]): Promise<void> {
  await db.execute(
    sql.raw(`create table "${table}_migrations" (tag text primary key, hash text not null,
      applied_at timestamptz not null default now())`),
  );
  for (const tag of tags) {
    const file = new URL(`../../drizzle/postgres/${tag}.sql`, import.meta.url);
    const text = readFileSync(file, 'utf8');
    for (const statement of text.split('--> statement-breakpoint')) {
      if (!statement.trim()) continue;
      await db.execute(sql.raw(statement.replaceAll('"idempotency_records', `"${table}`)));
    }
    const hash = createHash('sha256').update(text).digest('hex');
    await db.execute(
      sql`insert into ${sql.identifier(`${table}_migrations`)} (tag, hash) values (${tag}, ${hash})`,
    );
  }
}

/** What 0.1.0's migratePostgres left: the table from 0000_init and its bookkeeping row. */
const migrateAs010 = (db: AnyPgDatabase, table: string) =>
  migrateAsEarlier(db, table, ['0000_init']);

/** What the lease model's version left: 0000_init, 0001_functions and their bookkeeping rows. */
const migrateAsLeaseModel = (db: AnyPgDatabase, table: string) =>
  migrateAsEarlier(db, table, ['0000_init', '0001_functions']);

/**
 * The store as the lease model's version used it: the guard then claims (`<table>_claim`),
 * runs the work in a transaction that locks the claim (`_lock`) and completes it there
 * (`_complete`), the functions of 0001_functions, as that version did.
 */
function leaseModel<Tx>(store: IdempotencyStore<Tx>): IdempotencyStore<Tx> {
  return {
    claim: (request) => store.claim(request),
    transaction: (fence, work) => store.transaction(fence, work),
    complete: (fence, completion, tx) => store.complete(fence, completion, tx),
    release: (fence) => store.release(fence),
    purge: (options) => store.purge(options),
  };
}

/**
 * A payment of `key` through `guard`, answered in a word (or the value); how many times a
 * payment's work ran; and `counted`, for another call's work to count among them.
 */
function payments(guard: Guard<unknown>) {
  let ran = 0;
  const pay = (key: string, fingerprint = 'fp') =>
    guard
      .run({
        scope: 'acct',
        key,
        fingerprint,
        operation: 'pay',
        work: async () => {
          ran++;
          return { id: `new-${key}` };
        },
      })
      .then(
        (r): Answer => ({ value: r.value, replayed: r.replayed }),
        (e): Answer => (IdempotencyError.is(e) ? e.code : `unexpected: ${e}`),
      );
  const counted = <T>(value: T): T => {
    ran++;
    return value;
  };
  return { pay, runs: () => ran, counted };
}

/** Three duplicates of each key fired at once, as retries arrive: their answers, per key. */
async function duplicatesOf<const Keys extends readonly string[]>(
  pay: (key: string) => Promise<Answer>,
  keys: Keys,
): Promise<{ [I in keyof Keys]: Answer[] }> {
  const answers = await Promise.all(keys.flatMap((key) => [pay(key), pay(key), pay(key)]));
  return keys.map((_, i) => answers.slice(3 * i, 3 * i + 3)) as { [I in keyof Keys]: Answer[] };
}

/** One of the duplicates ran; the others were told it is in flight, or (once it committed) replay it. */
function expectRanOnce(group: Answer[]): void {
  const ran = group.filter((a) => typeof a === 'object' && !a.replayed);
  expect(ran).toHaveLength(1);
  for (const other of group.filter((a) => !ran.includes(a))) {
    expect(other === 'IDEMPOTENCY_KEY_IN_USE' || (other as { replayed: boolean }).replayed).toBe(
      true,
    );
  }
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

      it('S22/S24: before the upgrade a guarded call fails closed and names the missing function; migratePostgres applies 0001_functions and 0002_one_transaction; 0.1.0 records then answer as before (S6, S7, S9, S10, S14)', async () => {
        const guard = createGuard({ store: postgresStore(db, { table }) });
        const { pay, runs } = payments(guard);

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
          new RegExp(`has no function "${table}_begin".*migratePostgres`),
        );
        expect(runs()).toBe(0);

        expect(await migratePostgres(db, { table })).toEqual({
          applied: ['0001_functions', '0002_one_transaction'],
        });
        expect(await migratePostgres(db, { table })).toEqual({ applied: [] });

        const [paid, running, expired, fresh] = await duplicatesOf(pay, [
          'paid',
          'running',
          'expired',
          'fresh',
        ]);
        expect(paid).toEqual(Array(3).fill({ value: { id: 'p1' }, replayed: true }));
        expect(running).toEqual(Array(3).fill('IDEMPOTENCY_KEY_IN_USE'));
        for (const group of [expired, fresh]) expectRanOnce(group);
        expect(runs()).toBe(2);
        expect(await pay('paid', 'another')).toBe('IDEMPOTENCY_KEY_REUSED');
        expect(await pay('expired')).toEqual({ value: { id: 'new-expired' }, replayed: true });
      });
    },
  );

  describe.skipIf(skip)(
    `upgrading a database migrated up to 0001_functions on ${driver.name}${skip ? ` (${pg.skipReason})` : ''}`,
    () => {
      const table = uniqueTableName(`mg_upgrade01_${driver.name.replace(/\W/g, '')}`);
      let opened: ReturnType<(typeof drivers)[number]['create']>;
      let db: AnyPgDatabase;
      beforeAll(async () => {
        opened = driver.create();
        db = opened.db as AnyPgDatabase;
        await migrateAsLeaseModel(db, table);
      }, 60_000);
      afterAll(async () => {
        if (!opened) return;
        await dropRecordsTable(db, table);
        await opened.close();
      });

      it('S22/S24: before the upgrade a guarded call fails closed and names the missing function; migratePostgres applies only 0002_one_transaction; lease-era records then answer as before (S6, S7, S9, S10, S11)', async () => {
        const store = postgresStore(db, { table });
        const retentionMs = 24 * 60 * 60 * 1000;
        const request = (key: string, leaseMs: number) => ({
          scope: 'acct',
          key,
          fingerprint: 'fp',
          operation: 'pay',
          leaseMs,
          retentionMs,
        });

        // The lease model's version at work: a complete record, a claim whose lease is live
        // (its process still runs), and one whose lease ran out (its process died).
        const earlier = createGuard({ store: leaseModel(store) });
        expect(
          await earlier.run({
            scope: 'acct',
            key: 'paid',
            fingerprint: 'fp',
            operation: 'pay',
            work: async () => ({ id: 'p1' }),
          }),
        ).toEqual({ value: { id: 'p1' }, replayed: false });
        const running = await store.claim(request('running', 60_000));
        const stale = await store.claim(request('stale', 1));
        if (running.status !== 'claimed' || stale.status !== 'claimed') {
          throw new Error('expected both lease-era claims to be ours');
        }
        expect((await store.read({ scope: 'acct', key: 'running' }))?.state).toBe('in_flight');

        const guard = createGuard({ store });
        const { pay, runs, counted } = payments(guard);

        // S15, S22: without `<table>_begin` nothing runs and nothing is written.
        const before = await guard
          .run({
            scope: 'acct',
            key: 'fresh',
            fingerprint: 'fp',
            operation: 'pay',
            work: async () => counted(0),
          })
          .catch((error: unknown) => error);
        expect(IdempotencyError.is(before) && before.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
        expect(String((before as Error).cause)).toMatch(
          new RegExp(`has no function "${table}_begin".*migratePostgres`),
        );
        expect(runs()).toBe(0);
        expect(await store.read({ scope: 'acct', key: 'fresh' })).toBeUndefined();

        expect(await migratePostgres(db, { table })).toEqual({
          applied: ['0002_one_transaction'],
        });
        expect(await migratePostgres(db, { table })).toEqual({ applied: [] });

        const [paid, live, expiredLease, fresh] = await duplicatesOf(pay, [
          'paid',
          'running',
          'stale',
          'fresh',
        ]);
        // S9: the complete record replays.
        expect(paid).toEqual(Array(3).fill({ value: { id: 'p1' }, replayed: true }));
        // S10: the live lease-era claim is in flight.
        expect(live).toEqual(Array(3).fill('IDEMPOTENCY_KEY_IN_USE'));
        // S7, S11: the expired lease is taken over by one of its duplicates, and a new key is
        // claimed by one: each runs once.
        for (const group of [expiredLease, fresh]) expectRanOnce(group);
        expect(runs()).toBe(2);
        expect(await pay('stale')).toEqual({ value: { id: 'new-stale' }, replayed: true });
        expect(await pay('fresh')).toEqual({ value: { id: 'new-fresh' }, replayed: true });
        // S6: another request's fingerprint, on a complete record and on a lease-era claim.
        expect(await pay('paid', 'another')).toBe('IDEMPOTENCY_KEY_REUSED');
        expect(await pay('running', 'another')).toBe('IDEMPOTENCY_KEY_REUSED');

        // S8: the process whose lease ran out cannot complete the record taken over...
        const staleFence = { scope: 'acct', key: 'stale', token: stale.token };
        const completion = (id: string) => ({
          result: jsonSerializer.stringify({ id }),
          outcome: 'committed' as const,
          retentionMs,
        });
        expect(await store.complete(staleFence, completion('old-stale'))).toBe(false);
        // ...while the one whose lease is live still completes its own (a process of the
        // earlier version during a rolling upgrade), and its result then replays (S9).
        const runningFence = { scope: 'acct', key: 'running', token: running.token };
        expect(
          await store.transaction(runningFence, (tx) =>
            store.complete(runningFence, completion('old-running'), tx),
          ),
        ).toBe(true);
        expect(await pay('running')).toEqual({ value: { id: 'old-running' }, replayed: true });
        expect(await pay('stale')).toEqual({ value: { id: 'new-stale' }, replayed: true });
        expect(runs()).toBe(2);
      });
    },
  );
}
