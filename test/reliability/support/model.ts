/**
 * A reference model of the state machine (SPEC S6-S14) and fast-check commands that drive
 * the guard on the SQLite store next to it, on an injected clock. After every command the
 * real store must agree with the model, and the business table must hold exactly the
 * payments the model says committed (S8).
 */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import fc from 'fast-check';
import { createGuard, type Guard, IdempotencyError, rollback } from '../../../src/index.js';
import { migrateSqlite, type SqliteDatabase, sqliteStore } from '../../../src/sqlite/index.js';
import type { IdempotencyStore, StoreExtras } from '../../../src/store/index.js';

export const RETENTION = 5000;
const SCOPES = ['acct_a', 'acct_b'];
const KEYS = ['k1', 'k2'];
const PRINTS = ['fp1', 'fp2'];

/** A record as the table holds it: always complete (a key in flight has no row). */
interface ModelRecord {
  fingerprint: string;
  outcome: 'committed' | 'rolled_back';
  expiresAt: number;
  result: string;
}

export interface Model {
  time: number;
  records: Map<string, ModelRecord>;
  /** Committed business rows per scope/key. */
  payments: Map<string, number>;
}

export interface Real {
  clock: { time: number };
  db: SqliteDatabase;
  store: IdempotencyStore<SqliteDatabase> & StoreExtras;
  guard: Guard<SqliteDatabase>;
  close(): void;
}

type Cmd = fc.AsyncCommand<Model, Real>;
const id = (scope: string, key: string) => `${scope}/${key}`;

export function setup(): { model: Model; real: Real } {
  const clock = { time: 1_700_000_000_000 };
  const client = new Database(':memory:');
  const db = drizzle({ client });
  migrateSqlite(db);
  client.exec('create table business (scope text not null, key text not null)');
  const store = sqliteStore(db, { now: () => clock.time });
  const guard = createGuard({ store, retention: RETENTION });
  return {
    model: { time: clock.time, records: new Map(), payments: new Map() },
    real: { clock, db, store, guard, close: () => client.close() },
  };
}

function addPayment(m: Model, scope: string, key: string) {
  m.payments.set(id(scope, key), (m.payments.get(id(scope, key)) ?? 0) + 1);
}

/** S8: the business table holds exactly the rows the model says committed. */
function checkPayments(m: Model, r: Real) {
  const rows = r.db.$client
    .prepare('select scope, key, count(*) as n from business group by scope, key')
    .all() as { scope: string; key: string; n: number }[];
  const sorted = (entries: Iterable<[string, number]>) =>
    [...entries].sort(([a], [b]) => (a < b ? -1 : 1));
  assertEqual(
    sorted(rows.map((row) => [id(row.scope, row.key), row.n])),
    sorted(m.payments),
    'business rows',
  );
}

/** Every record the store reads agrees with the model's, expired ones included (S14). */
async function checkRecords(m: Model, r: Real) {
  for (const scope of SCOPES) {
    for (const key of KEYS) {
      const record = await r.store.read({ scope, key });
      const want = m.records.get(id(scope, key));
      assertEqual(
        record && {
          fingerprint: record.fingerprint,
          outcome: record.outcome,
          result: record.result,
          expiresAt: record.expiresAt.getTime(),
        },
        want && {
          fingerprint: want.fingerprint,
          outcome: want.outcome,
          result: want.result,
          expiresAt: want.expiresAt,
        },
        `record ${id(scope, key)}`,
      );
    }
  }
}

const scope = fc.constantFrom(...SCOPES);
const key = fc.constantFrom(...KEYS);
const print = fc.constantFrom(...PRINTS);

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.time += this.ms;
    r.clock.time += this.ms;
  }
  toString = () => `advance(${this.ms})`;
}

class Purge implements Cmd {
  constructor(readonly batchSize: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expired = [...m.records].filter(([, record]) => record.expiresAt <= m.time);
    const count = await r.store.purge({
      batchSize: this.batchSize,
      maxBatches: Number.POSITIVE_INFINITY,
    });
    assertEqual(count, expired.length, 'purged');
    for (const [name] of expired) m.records.delete(name);
    await checkRecords(m, r);
  }
  toString = () => `purge(${this.batchSize})`;
}

/** How a run's work ends: it commits, throws (S12), or keeps a final error (S12). */
type Ending = 'commits' | 'throws' | 'keeps';

/** A whole guarded call, as an adapter makes it (S6, S7, S8, S9, S12, S14). */
class Run implements Cmd {
  constructor(
    readonly scope: string,
    readonly key: string,
    readonly fp: string,
    readonly ending: Ending,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const name = id(this.scope, this.key);
    const standing = m.records.get(name);
    // S14: a record past its expiry counts as absent, whatever its fingerprint.
    const live = standing && standing.expiresAt > m.time ? standing : undefined;
    const value = { fp: this.fp, at: m.time };
    const outcome = await r.guard
      .run({
        scope: this.scope,
        key: this.key,
        fingerprint: this.fp,
        operation: 'pay',
        work: async (tx) => {
          tx.$client.prepare('insert into business values (?, ?)').run(this.scope, this.key);
          if (this.ending === 'throws') throw new Error('declined');
          if (this.ending === 'keeps') return rollback(value, { keep: true });
          return value;
        },
      })
      .then(
        (result) => ({ ok: true as const, ...result }),
        (error: unknown) => ({
          ok: false as const,
          code: IdempotencyError.is(error) ? error.code : 'thrown',
        }),
      );
    if (!live) {
      if (this.ending === 'throws') {
        // Nothing was written and everything rolled back: the record is as it was.
        assertEqual(outcome, { ok: false, code: 'thrown' }, 'failed run');
      } else {
        assertEqual(outcome, { ok: true, value, replayed: false }, 'fresh run');
        m.records.set(name, {
          fingerprint: this.fp,
          outcome: this.ending === 'keeps' ? 'rolled_back' : 'committed',
          expiresAt: m.time + RETENTION,
          result: JSON.stringify(value),
        });
        if (this.ending === 'commits') addPayment(m, this.scope, this.key);
      }
    } else if (live.fingerprint !== this.fp) {
      assertEqual(outcome, { ok: false, code: 'IDEMPOTENCY_KEY_REUSED' }, 'reused key');
    } else {
      assertEqual(outcome, { ok: true, value: JSON.parse(live.result), replayed: true }, 'replay');
    }
    checkPayments(m, r);
    await checkRecords(m, r);
  }
  toString = () => `run(${this.scope},${this.key},${this.fp},${this.ending})`;
}

export const commands = [
  fc.constantFrom(100, 400, 999, 1000, 2500, 6000).map((ms) => new Advance(ms)),
  fc.integer({ min: 1, max: 3 }).map((size) => new Purge(size)),
  fc
    .tuple(scope, key, print, fc.constantFrom<Ending>('commits', 'throws', 'keeps'))
    .map(([s, k, f, e]) => new Run(s, k, f, e)),
];

export function modelProperty() {
  return fc.asyncProperty(fc.commands(commands, { maxCommands: 60 }), async (cmds) => {
    const { model, real } = setup();
    try {
      await fc.asyncModelRun(() => ({ model, real }), cmds);
    } finally {
      real.close();
    }
  });
}

function assertEqual(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: store says ${a}, model says ${e}`);
}
