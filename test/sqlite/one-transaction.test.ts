/**
 * The SQLite store's one transaction (`claimAndRun`, SPEC S11): the claim, the work and the
 * complete record in one BEGIN IMMEDIATE ... COMMIT, with nothing of the key committed on the
 * way (S7, S8, S11, S12).
 *
 * The statements are counted through better-sqlite3's `verbose` hook, which sees every
 * statement the connection runs, prepared or not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { IdempotencyError } from '../../src/core/errors.js';
import { createGuard, type Guard } from '../../src/core/guard.js';
import { rollback } from '../../src/core/rollback.js';
import { migrateSqlite, type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { deferred } from '../support/deferred.js';
import { businessIds, type DatabaseKind, insertBusiness, KINDS, manualClock } from './helpers.js';

const RETENTION = 60_000;

/** A migrated database whose every statement, from now on, is noted in `log`. */
function openLogged(kind: DatabaseKind) {
  const folder = kind === 'file' ? mkdtempSync(join(tmpdir(), 'mutation-guard-one-tx-')) : '';
  const file = kind === 'file' ? join(folder, 'test.db') : ':memory:';
  const log: string[] = [];
  let logging = false;
  const client = new Database(file, {
    verbose: (message) => {
      if (logging) log.push(String(message));
    },
  });
  const db = drizzle({ client });
  migrateSqlite(db);
  client.exec('CREATE TABLE business (id TEXT PRIMARY KEY NOT NULL, note TEXT)');
  const clock = manualClock();
  const store = sqliteStore(db, { now: clock.now });
  logging = true;
  return {
    db,
    file,
    log,
    clock,
    store,
    guard: createGuard({ store, retention: RETENTION }),
    close() {
      client.close();
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}

type Logged = ReturnType<typeof openLogged>;
let open: Logged | undefined;
afterEach(() => {
  open?.close();
  open = undefined;
});

/** The statements that begin, end or write (reads left out), in the order they ran. */
function writes(log: string[]): string[] {
  return log
    .filter((sql) => !/^\s*SELECT/i.test(sql))
    .map((sql) => sql.replace(/\s+/g, ' ').slice(0, 40));
}

function call(key: string, id: string, fingerprint = `fp-${key}`) {
  return {
    scope: 'tenant-a',
    key,
    fingerprint,
    operation: 'createPayment',
    work: async (tx: SqliteDatabase) => {
      insertBusiness(tx, id);
      return { id };
    },
  };
}

/** A guarded call of `key` whose work writes `id`, then holds its transaction until `finish`. */
function heldOpen(guard: Guard<SqliteDatabase>, key: string, id: string) {
  const started = deferred();
  const finished = deferred();
  const running = guard.run({
    ...call(key, id),
    work: async (tx: SqliteDatabase) => {
      insertBusiness(tx, id);
      started.resolve();
      await finished.promise;
      return { id };
    },
  });
  return { running, started: started.promise, finish: () => finished.resolve() };
}

describe.each(KINDS)('sqliteStore one-transaction claim (%s database)', (kind) => {
  it('S7/S8/S11: a fresh call is one transaction; its record is written once, complete, before COMMIT', async () => {
    open = openLogged(kind);
    const { guard, log, store } = open;
    const result = await guard.run(call('k1', 'p1'));

    expect(result).toEqual({ value: { id: 'p1' }, replayed: false });
    const ran = writes(log);
    // One BEGIN, one COMMIT: no claim committed on its own, no in-flight row.
    expect(ran.filter((sql) => sql.startsWith('BEGIN'))).toEqual(['BEGIN IMMEDIATE']);
    expect(ran.filter((sql) => sql === 'COMMIT')).toHaveLength(1);
    expect(ran.join('\n')).not.toContain("'in_flight'");
    expect(ran.at(-2)).toMatch(/^INSERT INTO "idempotency_records"/);
    expect(ran.at(-1)).toBe('COMMIT');
    const record = await store.read({ scope: 'tenant-a', key: 'k1' });
    expect(record).toMatchObject({ outcome: 'committed', result: '{"id":"p1"}' });
  });

  it('S9: a replay is one read: no transaction, no write', async () => {
    open = openLogged(kind);
    const { guard, log } = open;
    await guard.run(call('k1', 'p1'));
    log.length = 0;

    const replay = await guard.run(call('k1', 'p2'));

    expect(replay).toEqual({ value: { id: 'p1' }, replayed: true });
    expect(writes(log)).toEqual([]);
    expect(businessIds(open.db)).toEqual(['p1']);
  });

  it('S12: a kept final error rolls the work back and commits its record in the same transaction', async () => {
    open = openLogged(kind);
    const { guard, log, store, db } = open;
    const declined = await guard.run({
      ...call('k1', 'p1'),
      work: async (tx: SqliteDatabase) => {
        insertBusiness(tx, 'p1');
        return rollback({ declined: true }, { keep: true });
      },
    });

    expect(declined).toEqual({ value: { declined: true }, replayed: false });
    expect(businessIds(db)).toEqual([]);
    const ran = writes(log);
    expect(ran.filter((sql) => sql.startsWith('BEGIN'))).toHaveLength(1);
    expect(ran).toContain('ROLLBACK TO mutation_guard_work');
    expect(ran.at(-1)).toBe('COMMIT');
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toMatchObject({
      outcome: 'rolled_back',
      result: JSON.stringify({ declined: true }),
    });
    // A retry replays the kept error; the work does not run again.
    expect(await guard.run(call('k1', 'p2'))).toEqual({
      value: { declined: true },
      replayed: true,
    });
  });

  it('S8/S12: work that throws leaves nothing behind: no row, no business write, the key free', async () => {
    open = openLogged(kind);
    const { guard, store, db } = open;
    const failing = guard.run({
      ...call('k1', 'p1'),
      work: async (tx: SqliteDatabase) => {
        insertBusiness(tx, 'p1');
        throw new Error('card declined');
      },
    });

    await expect(failing).rejects.toThrow('card declined');
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toBeUndefined();
    expect(businessIds(db)).toEqual([]);
    expect(await guard.run(call('k1', 'p2'))).toEqual({ value: { id: 'p2' }, replayed: false });
  });

  it('S6/S10: while the work runs, duplicates fired at once answer from this process: 409 for the same request, 422 for another', async () => {
    open = openLogged(kind);
    const { guard, db } = open;
    const original = heldOpen(guard, 'k1', 'p1');
    await original.started;

    const answers = await Promise.allSettled([
      guard.run(call('k1', 'p2')),
      guard.run(call('k1', 'p3')),
      guard.run(call('k1', 'p4', 'another request')),
    ]);
    original.finish();
    await original.running;

    const codes = answers.map((a) =>
      a.status === 'rejected' && IdempotencyError.is(a.reason) ? a.reason.code : a.status,
    );
    expect(codes).toEqual([
      'IDEMPOTENCY_KEY_IN_USE',
      'IDEMPOTENCY_KEY_IN_USE',
      'IDEMPOTENCY_KEY_REUSED',
    ]);
    expect(businessIds(db)).toEqual(['p1']);
  });

  it('S14: a complete record past its retention is replaced by one transaction, whatever its fingerprint', async () => {
    open = openLogged(kind);
    const { guard, clock, store, db } = open;
    await guard.run(call('k1', 'p1'));
    clock.advance(RETENTION);

    expect(await guard.run(call('k1', 'p2', 'another request'))).toEqual({
      value: { id: 'p2' },
      replayed: false,
    });
    expect(await store.read({ scope: 'tenant-a', key: 'k1' })).toMatchObject({
      fingerprint: 'another request',
      outcome: 'committed',
    });
    expect(businessIds(db)).toEqual(['p1', 'p2']);
  });

  it('S8: a guarded call nested in guarded work is a savepoint of the outer transaction and commits or rolls back with it', async () => {
    open = openLogged(kind);
    const { guard, store, db } = open;
    const outer = guard.run({
      ...call('outer', 'o1'),
      work: async (tx: SqliteDatabase) => {
        insertBusiness(tx, 'o1');
        await guard.run(call('inner', 'i1'));
        throw new Error('outer fails after the inner call');
      },
    });

    await expect(outer).rejects.toThrow('outer fails');
    expect(businessIds(db)).toEqual([]);
    expect(await store.read({ scope: 'tenant-a', key: 'inner' })).toBeUndefined();
    expect(await guard.run(call('inner', 'i2'))).toEqual({ value: { id: 'i2' }, replayed: false });
  });
});

describe('sqliteStore one-transaction claim, file database', () => {
  it('S8/S11: while the work runs, another connection sees no row for the key: only the complete record ever commits', async () => {
    open = openLogged('file');
    const { guard, file } = open;
    const reader = new Database(file, { readonly: true });
    const rows = () =>
      reader.prepare("SELECT outcome FROM idempotency_records WHERE key = 'k1'").pluck().all();
    const original = heldOpen(guard, 'k1', 'p1');
    try {
      await original.started;
      expect(rows()).toEqual([]);
      original.finish();
      await original.running;
      expect(rows()).toEqual(['committed']);
    } finally {
      reader.close();
    }
  });
});
