/**
 * A reference model of the state machine (SPEC S6-S14) and fast-check commands that drive
 * the SQLite store (and the guard on it) next to it, on an injected clock. After every
 * command the real store must agree with the model, and the business table must hold
 * exactly the payments the model says committed (S8).
 */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import fc from 'fast-check';
import { createGuard, type Guard, IdempotencyError } from '../../../src/index.js';
import { migrateSqlite, type SqliteDatabase, sqliteStore } from '../../../src/sqlite/index.js';
import { type Fence, type IdempotencyStore, LeaseLostError } from '../../../src/store/index.js';

export const LEASE = 1000;
export const RETENTION = 5000;
const SCOPES = ['acct_a', 'acct_b'];
const KEYS = ['k1', 'k2'];
const PRINTS = ['fp1', 'fp2'];

interface ModelRecord {
  state: 'in_flight' | 'complete';
  fingerprint: string;
  /** Which claim holds it (an index into `fences`), while in flight. */
  holder: number | undefined;
  leaseExpiresAt: number | undefined;
  expiresAt: number;
  result: string | null;
}

export interface Model {
  time: number;
  records: Map<string, ModelRecord>;
  /** Every claim ever granted, held or stale; commands pick among them. */
  fences: { scope: string; key: string }[];
  /** Committed business rows per scope/key. */
  payments: Map<string, number>;
}

export interface Real {
  clock: { time: number };
  db: SqliteDatabase;
  store: IdempotencyStore<SqliteDatabase>;
  guard: Guard<SqliteDatabase>;
  fences: Fence[];
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
  const guard = createGuard({ store, lease: LEASE, retention: RETENTION });
  return {
    model: { time: clock.time, records: new Map(), fences: [], payments: new Map() },
    real: { clock, db, store, guard, fences: [], close: () => client.close() },
  };
}

/** What the store's claim must do at the model's time (S7, S11, S14, S6). */
function predictClaim(m: Model, scope: string, key: string, fingerprint: string) {
  const record = m.records.get(id(scope, key));
  const now = m.time;
  if (!record) return { claimed: true, takenOver: false };
  if (
    record.state === 'in_flight' &&
    record.leaseExpiresAt! <= now &&
    (record.fingerprint === fingerprint || record.expiresAt <= now)
  ) {
    return { claimed: true, takenOver: true };
  }
  if (record.state === 'complete' && record.expiresAt <= now) {
    return { claimed: true, takenOver: false };
  }
  return { claimed: false, takenOver: false, record };
}

function grantClaim(m: Model, r: Real, scope: string, key: string, fp: string, token: string) {
  m.records.set(id(scope, key), {
    state: 'in_flight',
    fingerprint: fp,
    holder: m.fences.length,
    leaseExpiresAt: m.time + LEASE,
    expiresAt: m.time + LEASE + RETENTION,
    result: null,
  });
  m.fences.push({ scope, key });
  r.fences.push({ scope, key, token });
}

function held(m: Model, index: number): boolean {
  const fence = m.fences[index]!;
  const record = m.records.get(id(fence.scope, fence.key));
  return record?.state === 'in_flight' && record.holder === index;
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

const scope = fc.constantFrom(...SCOPES);
const key = fc.constantFrom(...KEYS);
const print = fc.constantFrom(...PRINTS);

class Claim implements Cmd {
  constructor(
    readonly scope: string,
    readonly key: string,
    readonly fp: string,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const want = predictClaim(m, this.scope, this.key, this.fp);
    const got = await r.store.claim({
      scope: this.scope,
      key: this.key,
      fingerprint: this.fp,
      operation: 'pay',
      leaseMs: LEASE,
      retentionMs: RETENTION,
    });
    if (got.status === 'claimed') {
      assertEqual({ claimed: true, takenOver: got.takenOver }, want, 'claim');
      grantClaim(m, r, this.scope, this.key, this.fp, got.token);
    } else {
      assertEqual(true, want.claimed === false, 'claim refused');
      assertEqual(
        { state: got.record.state, fingerprint: got.record.fingerprint, result: got.record.result },
        {
          state: want.record!.state,
          fingerprint: want.record!.fingerprint,
          result: want.record!.result,
        },
        'standing record',
      );
    }
  }
  toString = () => `claim(${this.scope},${this.key},${this.fp})`;
}

/** The guard's commit path: business row + fenced completion in one transaction (S8). */
class Complete implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.fences.length > 0;
  async run(m: Model, r: Real) {
    const index = this.pick % m.fences.length;
    const fence = r.fences[index]!;
    const result = JSON.stringify({ by: index });
    const want = held(m, index);
    let completed: boolean | 'lease-lost';
    try {
      completed = await r.store.transaction(fence, async (tx) => {
        tx.$client.prepare('insert into business values (?, ?)').run(fence.scope, fence.key);
        const done = await r.store.complete(
          fence,
          { result, outcome: 'committed', retentionMs: RETENTION },
          tx,
        );
        if (!done) throw new LeaseLostError();
        return done;
      });
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      completed = 'lease-lost';
    }
    assertEqual(completed, want ? true : 'lease-lost', `complete #${index}`);
    if (want) {
      const record = m.records.get(id(fence.scope, fence.key))!;
      Object.assign(record, {
        state: 'complete',
        holder: undefined,
        leaseExpiresAt: undefined,
        expiresAt: m.time + RETENTION,
        result,
      });
      addPayment(m, fence.scope, fence.key);
    }
    checkPayments(m, r);
  }
  toString = () => `complete(#${this.pick})`;
}

/** The guard's failure path: the work writes, throws, rolls back; the claim is released (S12). */
class Fail implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.fences.length > 0;
  async run(m: Model, r: Real) {
    const index = this.pick % m.fences.length;
    const fence = r.fences[index]!;
    const want = held(m, index);
    const boom = new Error('declined');
    const thrown = await r.store
      .transaction(fence, async (tx) => {
        tx.$client.prepare('insert into business values (?, ?)').run(fence.scope, fence.key);
        throw boom;
      })
      .catch((error: unknown) => error);
    assertEqual(thrown === boom || thrown instanceof LeaseLostError, true, 'fail throws');
    assertEqual(await r.store.release(fence), want, `release #${index}`);
    if (want) m.records.delete(id(fence.scope, fence.key));
    checkPayments(m, r);
  }
  toString = () => `fail(#${this.pick})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    m.time += this.ms;
    r.clock.time += this.ms;
  }
  toString = () => `advance(${this.ms})`;
}

/** An original outlived its lease: the retry takes over with a new token (S11). */
class TakeOver implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.fences.length > 0;
  async run(m: Model, r: Real) {
    const fence = m.fences[this.pick % m.fences.length]!;
    const record = m.records.get(id(fence.scope, fence.key));
    await new Advance(LEASE).run(m, r);
    await new Claim(fence.scope, fence.key, record?.fingerprint ?? PRINTS[0]!).run(m, r);
  }
  toString = () => `takeOver(#${this.pick})`;
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
  }
  toString = () => `purge(${this.batchSize})`;
}

/** A whole guarded call, as an adapter makes it (S6, S9, S10, S12). */
class Run implements Cmd {
  constructor(
    readonly scope: string,
    readonly key: string,
    readonly fp: string,
    readonly fails: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const want = predictClaim(m, this.scope, this.key, this.fp);
    const value = { fp: this.fp, at: m.time };
    const outcome = await r.guard
      .run({
        scope: this.scope,
        key: this.key,
        fingerprint: this.fp,
        operation: 'pay',
        work: async (tx) => {
          tx.$client.prepare('insert into business values (?, ?)').run(this.scope, this.key);
          if (this.fails) throw new Error('declined');
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
    if (want.claimed) {
      if (this.fails) {
        // The guard's one-transaction claim (S11) wrote nothing and rolled everything back:
        // the record is as it was (absent, expired, or a lease claim it would have taken
        // over, whose holder still holds it).
        assertEqual(outcome, { ok: false, code: 'thrown' }, 'failed run');
      } else {
        assertEqual(outcome, { ok: true, value, replayed: false }, 'fresh run');
        m.records.set(id(this.scope, this.key), {
          state: 'complete',
          fingerprint: this.fp,
          holder: undefined,
          leaseExpiresAt: undefined,
          expiresAt: m.time + RETENTION,
          result: JSON.stringify(value),
        });
        addPayment(m, this.scope, this.key);
      }
      // A run's claim is never handed out again: it is done with it.
      m.fences.push({ scope: this.scope, key: this.key });
      r.fences.push({ scope: this.scope, key: this.key, token: 'spent' });
    } else if (want.record!.fingerprint !== this.fp) {
      assertEqual(outcome, { ok: false, code: 'IDEMPOTENCY_KEY_REUSED' }, 'reused key');
    } else if (want.record!.state === 'complete') {
      assertEqual(
        outcome,
        { ok: true, value: JSON.parse(want.record!.result!), replayed: true },
        'replay',
      );
    } else {
      assertEqual(outcome, { ok: false, code: 'IDEMPOTENCY_KEY_IN_USE' }, 'in flight');
    }
    checkPayments(m, r);
  }
  toString = () => `run(${this.scope},${this.key},${this.fp}${this.fails ? ',fails' : ''})`;
}

export const commands = [
  fc.tuple(scope, key, print).map(([s, k, f]) => new Claim(s, k, f)),
  fc.nat().map((pick) => new Complete(pick)),
  fc.nat().map((pick) => new Fail(pick)),
  fc.constantFrom(100, 400, 999, 1000, 2500, 6000).map((ms) => new Advance(ms)),
  fc.nat().map((pick) => new TakeOver(pick)),
  fc.integer({ min: 1, max: 3 }).map((size) => new Purge(size)),
  fc.tuple(scope, key, print, fc.boolean()).map(([s, k, f, x]) => new Run(s, k, f, x)),
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
