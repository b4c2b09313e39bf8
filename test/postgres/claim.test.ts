/**
 * The Postgres claim's paths, statement by statement (SPEC S7, S11, S14, S24): a fresh claim,
 * a replay and a takeover are one statement each (the claim function of
 * drizzle/postgres/0001_functions.sql); a conflicting row committed while the claim waited is
 * read by that same statement; and the claim's own commit is asynchronous yet visible to
 * other connections at once. Statements are counted through Drizzle's logger.
 */
import { PGlite } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/postgres/db.js';
import {
  type AnyPgDatabase,
  migratePostgres,
  type PgTransactionOf,
  postgresStore,
} from '../../src/postgres/index.js';
import type { IdempotencyStore, StoreExtras } from '../../src/store/seam.js';
import { deferred } from '../support/deferred.js';
import {
  claimRequests,
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  TEST_DATABASE_URL,
  uniqueTableName,
} from '../support/postgres.js';

const pg_ = await postgresAvailability();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type AnyStore = IdempotencyStore<PgTransactionOf<AnyPgDatabase>> & StoreExtras;
interface Logged {
  query: string;
  params: unknown[];
}
interface Opened {
  db: AnyPgDatabase;
  log: Logged[];
  close(): Promise<void>;
}

const drivers: { name: string; open: () => Opened; multiConnection: boolean }[] = [
  {
    name: 'node-postgres',
    multiConnection: true,
    open: () => {
      const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
      pool.on('error', () => {});
      const log: Logged[] = [];
      const db = drizzleNodePg({ client: pool, logger: { logQuery: logTo(log) } });
      return { db, log, close: () => pool.end() };
    },
  },
  {
    name: 'postgres.js',
    multiConnection: true,
    open: () => {
      const client = postgres(TEST_DATABASE_URL, { max: 4, onnotice: () => {} });
      const log: Logged[] = [];
      const db = drizzlePostgresJs({ client, logger: { logQuery: logTo(log) } });
      return { db, log, close: () => client.end({ timeout: 5 }) };
    },
  },
  {
    name: 'PGlite',
    multiConnection: false,
    open: () => {
      const client = new PGlite();
      const log: Logged[] = [];
      const db = drizzlePglite({ client, logger: { logQuery: logTo(log) } });
      return { db, log, close: () => client.close() };
    },
  },
];

function logTo(log: Logged[]) {
  return (query: string, params: unknown[]) => {
    log.push({ query, params });
  };
}

/** The store's statements in `log`, by kind (begin/commit and the tests' own are left out). */
function kinds(log: Logged[]): string[] {
  return log.flatMap(({ query }) => {
    if (query.includes('_claim"(')) return ['claim'];
    if (/^\s*select fingerprint/.test(query)) return ['read'];
    return [];
  });
}

async function rows<Row>(db: AnyPgDatabase, query: ReturnType<typeof sql>): Promise<Row[]> {
  const result = await db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Row[];
}

/**
 * Runs `statement` in a transaction on `db` (another pool) and keeps that transaction open,
 * its row locks held, until `end()`: another process caught in the middle of its claim.
 */
function holdOpen(db: AnyPgDatabase, statement: SQL) {
  const ran = deferred();
  const gate = deferred();
  const ended = db.transaction(async (tx) => {
    await tx.execute(statement);
    ran.resolve();
    await gate.promise;
  });
  return {
    /** Settles once the statement ran (or fails with the transaction). */
    held: Promise.race([ran.promise, ended]),
    end: () => gate.resolve(),
    ended,
  };
}

/** Resolves once a claim statement on `table` waits for a row lock (10 s at the most). */
async function claimWaitsOnALock(db: AnyPgDatabase, table: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [waiting] = await rows<{ n: number }>(
      db,
      sql`select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and query like '%_claim"(%'
            and query like ${`%${table}%`}`,
    );
    if (Number(waiting!.n) > 0) return;
    if (Date.now() > deadline) throw new Error('the claim never waited on the row');
    await sleep(10);
  }
}

for (const driver of drivers) {
  const needsServer = driver.multiConnection && !pg_.realPostgres;
  describe.skipIf(needsServer)(
    `postgres claim paths on ${driver.name}${needsServer ? ` (${pg_.skipReason})` : ''}`,
    () => {
      let opened: Opened;
      let store: AnyStore;
      const table = uniqueTableName(`mg_claim_${driver.name.replace(/\W/g, '')}`);
      const request = claimRequests();

      beforeAll(async () => {
        opened = driver.open();
        await migratePostgres(opened.db, { table });
        store = postgresStore(opened.db, { table });
      });
      afterAll(async () => {
        if (!opened) return;
        await dropRecordsTable(opened.db, table);
        await opened.close();
      });
      beforeEach(() => {
        opened.log.length = 0;
      });

      it('S7: a fresh claim is one statement, and so is a claim that finds the record', async () => {
        const req = request();
        expect(await store.claim(req)).toMatchObject({ status: 'claimed', takenOver: false });
        expect(kinds(opened.log)).toEqual(['claim']);
        opened.log.length = 0;
        const again = await store.claim(req);
        expect(kinds(opened.log)).toEqual(['claim']);
        if (again.status !== 'exists') throw new Error('expected the record');
        // The one-statement read returns what `read` returns, on the database clock.
        const read = await store.read(req);
        expect({ ...again.record, readAt: undefined }).toEqual({ ...read, readAt: undefined });
        expect(again.record.readAt.getTime()).toBeLessThanOrEqual(read!.readAt.getTime());
        const left = again.record.leaseExpiresAt!.getTime() - again.record.readAt.getTime();
        expect(left).toBeGreaterThan(20_000);
        expect(left).toBeLessThanOrEqual(30_000);
      });

      it('S9: a complete record within retention is returned by the one statement', async () => {
        const req = request();
        const claim = await store.claim(req);
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: claim.token };
        await store.complete(fence, { result: '"ok"', outcome: 'committed', retentionMs: 60_000 });
        opened.log.length = 0;
        expect(await store.claim(req)).toMatchObject({
          status: 'exists',
          record: { state: 'complete', outcome: 'committed', result: '"ok"', leaseExpiresAt: null },
        });
        expect(kinds(opened.log)).toEqual(['claim']);
      });

      it('S11: an expired lease of the same request is taken over by the same one statement', async () => {
        const req = request({ leaseMs: 100 });
        const first = await store.claim(req);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await sleep(250);
        opened.log.length = 0;
        const second = await store.claim(req);
        expect(second).toMatchObject({ status: 'claimed', takenOver: true });
        expect(kinds(opened.log)).toEqual(['claim']);
        if (second.status === 'claimed') expect(second.token).not.toBe(first.token);
      });

      it('S6: an expired lease of another request is not taken over: the one statement returns it', async () => {
        const req = request({ leaseMs: 100 });
        await store.claim(req);
        await sleep(250);
        opened.log.length = 0;
        const other = await store.claim({ ...req, fingerprint: 'fp-b' });
        expect(other).toMatchObject({ status: 'exists', record: { fingerprint: 'fp-a' } });
        expect(kinds(opened.log)).toEqual(['claim']);
      });

      it('S14: a complete record past its retention is claimed afresh by the one statement', async () => {
        const req = request();
        const claim = await store.claim(req);
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const fence = { scope: req.scope, key: req.key, token: claim.token };
        await store.complete(fence, { result: '1', outcome: 'committed', retentionMs: 1 });
        await sleep(30);
        opened.log.length = 0;
        expect(await store.claim({ ...req, fingerprint: 'fp-new' })).toMatchObject({
          status: 'claimed',
          takenOver: false,
        });
        expect(kinds(opened.log)).toEqual(['claim']);
        expect(await store.read(req)).toMatchObject({ state: 'in_flight', fingerprint: 'fp-new' });
      });

      it('S24: the claim commits asynchronously: its statement really turns synchronous_commit off for its own transaction', async () => {
        const req = request();
        await store.claim(req);
        const claim = opened.log.find(({ query }) => query.includes('_claim"('))!;
        const setting = async (handle: AnyPgDatabase) =>
          (await rows<{ synchronous_commit: string }>(handle, sql`show synchronous_commit`))[0]!
            .synchronous_commit;
        const before = await setting(opened.db);
        expect(before).not.toBe('off');
        // The same statement and values (a key of its own) inside a transaction we roll back.
        const params = claim.params.map((value) => (value === req.key ? `${req.key}-x` : value));
        let inside: string | undefined;
        const rolledBack = new Error('roll back');
        await expect(
          opened.db.transaction(async (tx) => {
            const result = await tx._.session
              .prepareQuery({ sql: claim.query, params }, undefined, undefined, false)
              .execute();
            expect(rowsOf<{ status: string }>(result)[0]?.status).toBe('claimed');
            inside = await setting(tx);
            throw rolledBack;
          }),
        ).rejects.toBe(rolledBack);
        expect(inside).toBe('off');
        // Transaction-local: the connection is back to its own setting afterwards.
        expect(await setting(opened.db)).toBe(before);
      });

      it('S24: a store on an open transaction leaves that transaction synchronous', async () => {
        const req = request();
        const outcome = await opened.db
          .transaction(async (tx) => {
            const inner = postgresStore(tx as AnyPgDatabase, { table });
            const claim = await inner.claim(req);
            const [row] = await rows<{ synchronous_commit: string }>(
              tx as AnyPgDatabase,
              sql`show synchronous_commit`,
            );
            return { claim: claim.status, setting: row!.synchronous_commit };
          })
          .catch((error: unknown) => error);
        expect(outcome).toEqual({ claim: 'claimed', setting: expect.not.stringMatching(/^off$/) });
      });

      it.skipIf(!driver.multiConnection)(
        `S7/S24: an asynchronously committed claim is visible to another pool at once${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          const other = createNodePgDb({ max: 2 });
          try {
            const otherStore = postgresStore(other.db, { table });
            for (let i = 0; i < 5; i++) {
              const req = request();
              expect((await store.claim(req)).status).toBe('claimed');
              const seen = await otherStore.claim(req);
              expect(seen).toMatchObject({ status: 'exists', record: { state: 'in_flight' } });
              expect((await otherStore.read(req))?.state).toBe('in_flight');
            }
          } finally {
            await other.close();
          }
        },
      );

      it.skipIf(!driver.multiConnection)(
        `S7: a conflicting row committed while the claim waited on it is returned by that same statement${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          const req = request();
          const other = createNodePgDb({ max: 2 });
          // Another process's claim, inserted but not yet committed.
          const concurrent = holdOpen(
            other.db,
            sql`insert into ${sql.identifier(table)}
                  (scope, key, fingerprint, operation, state, token, lease_expires_at, expires_at)
                values (${req.scope}, ${req.key}, 'fp-other', 'createPayment', 'in_flight',
                  'other-token', now() + interval '30 seconds', now() + interval '1 hour')`,
          );
          try {
            await concurrent.held;
            const claiming = store.claim(req);
            // Commit only once our claim statement is waiting on that row. Its INSERT's
            // snapshot cannot see the row; the function's next statement, with a snapshot of
            // its own (READ COMMITTED), does.
            await claimWaitsOnALock(other.db, table);
            concurrent.end();
            await concurrent.ended;
            const claim = await claiming;
            expect(claim).toMatchObject({
              status: 'exists',
              record: { fingerprint: 'fp-other', state: 'in_flight' },
            });
            expect(kinds(opened.log)).toEqual(['claim']);
          } finally {
            concurrent.end();
            await other.close();
          }
        },
      );

      it.skipIf(!driver.multiConnection)(
        `S6/S11: a record that is becoming another request's expired in-flight claim is never taken over${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          // The record is complete and past retention (anyone may claim it) as our claim
          // reads it; but another process is turning it into its own in-flight claim
          // (fingerprint fp-a, lease already expired), not yet committed. The takeover's
          // SKIP LOCKED passes the row by: our claim answers at once that it is in flight
          // for someone (409), never claims it, and once the other commits sees fp-a (422).
          const req = request({ fingerprint: 'fp-b' });
          await opened.db.execute(sql`
            insert into ${sql.identifier(table)}
              (scope, key, fingerprint, operation, state, token, outcome, result,
               lease_expires_at, expires_at)
            values (${req.scope}, ${req.key}, 'fp-old', 'createPayment', 'complete', null,
              'committed', '"old"', null, now() - interval '1 second')`);
          const other = createNodePgDb({ max: 2 });
          const concurrent = holdOpen(
            other.db,
            sql`update ${sql.identifier(table)} set fingerprint = 'fp-a', state = 'in_flight',
                  token = 'a-token', outcome = null, result = null,
                  lease_expires_at = now() - interval '1 second',
                  expires_at = now() + interval '1 hour'
                where scope = ${req.scope} and key = ${req.key}`,
          );
          try {
            await concurrent.held;
            const meanwhile = await store.claim(req);
            expect(meanwhile).toMatchObject({
              status: 'exists',
              record: { state: 'in_flight', result: null, fingerprint: 'fp-b' },
            });
            concurrent.end();
            await concurrent.ended;
            opened.log.length = 0;
            expect(await store.claim(req)).toMatchObject({
              status: 'exists',
              record: { fingerprint: 'fp-a', state: 'in_flight' },
            });
            expect(kinds(opened.log)).toEqual(['claim']);
            expect(await store.read(req)).toMatchObject({ fingerprint: 'fp-a' });
          } finally {
            concurrent.end();
            await other.close();
          }
        },
      );

      it.skipIf(!driver.multiConnection)(
        `S14: an expired record that a concurrent takeover holds is never returned as current: it is in flight (409), not replayed${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          // Another claim is taking the expired record over right now: it holds the row's
          // lock, so our takeover skips the row, and a read sees the version before that
          // takeover commits, still complete with its old result.
          const req = request();
          await opened.db.execute(sql`
            insert into ${sql.identifier(table)}
              (scope, key, fingerprint, operation, state, token, outcome, result,
               lease_expires_at, expires_at)
            values (${req.scope}, ${req.key}, ${req.fingerprint}, 'createPayment', 'complete',
              null, 'committed', '"old"', null, now() - interval '1 second')`);
          const other = createNodePgDb({ max: 2 });
          const takeover = holdOpen(
            other.db,
            sql`select 1 from ${sql.identifier(table)}
                where scope = ${req.scope} and key = ${req.key} for update`,
          );
          try {
            await takeover.held;
            const claim = await store.claim(req);
            expect(claim).toMatchObject({
              status: 'exists',
              record: { state: 'in_flight', result: null, fingerprint: req.fingerprint },
            });
            takeover.end();
            await takeover.ended;
          } finally {
            takeover.end();
            await other.close();
          }
        },
      );

      it.skipIf(!driver.multiConnection)(
        `S10/S11: an eligible record whose original transaction still holds its lock is not taken over; the claim reads it instead${driver.multiConnection ? '' : ' (skipped: needs a second connection; PGlite has one)'}`,
        async () => {
          const req = request({ leaseMs: 100 });
          const claim = await store.claim(req);
          if (claim.status !== 'claimed') throw new Error('expected a claim');
          const fence = { scope: req.scope, key: req.key, token: claim.token };
          const inside = deferred();
          const gate = deferred();
          const original = store.transaction(fence, async () => {
            inside.resolve();
            await gate.promise;
            return 'done';
          });
          try {
            await inside.promise;
            await sleep(250);
            opened.log.length = 0;
            const retry = await store.claim(req);
            expect(retry).toMatchObject({ status: 'exists', record: { state: 'in_flight' } });
            expect(kinds(opened.log)).toEqual(['claim']);
          } finally {
            gate.resolve();
            await original.catch(() => {});
          }
        },
      );
    },
  );
}
