/**
 * `npm run bench:designs`: the floor of each design, measured side by side in one interleaved
 * run (bench/measure.ts), against the unguarded mutation (the denominator of the goals,
 * docs/benchmarks.md).
 *
 * Postgres, against the insert in its own Drizzle transaction. Raw node-postgres, nothing
 * between the statements (bench/db/design-statements.ts says what each design sends):
 * - `lease, a round trip per statement`: the store's statements as it sends them on
 *   postgres.js and PGlite (and a single pg.Client);
 * - `lease, four round trips`: as it sends them on a node-postgres Pool (BEGIN with the lock,
 *   the completion with COMMIT, src/postgres/pool-transaction.ts);
 * - `lease, three round trips`: the claim merged in too; it begins its transaction before
 *   the claim's answer is known, so its replay (measured too) is two round trips;
 * - `one transaction, as shipped`: the store's one-transaction claim, no lease and no
 *   in-flight row: BEGIN, `_begin` (the key's transaction-scoped advisory locks, then the
 *   record), a savepoint, the insert, `_finish` (the complete record, once), COMMIT; one
 *   round trip each, and merged into three as the store sends them on a node-postgres Pool;
 * - `one transaction, claim row inside`: the lease claim function's INSERT as the business
 *   transaction's first statement (no commit of its own), merged into three round trips: the
 *   other one-transaction design measured before choosing, which writes its record twice;
 * - the first round trip of a fresh call alone, answered after it: `BEGIN` alone, `BEGIN`
 *   with a primary-key SELECT of the record, and as shipped (`_begin` and the savepoint);
 * - a duplicate of a key in flight, against an original held open for the whole group: its
 *   `_begin` finds the request's lock taken and answers at once;
 * - the replays: the shipped first query, the lease's claim function, and a plain primary-key
 *   SELECT.
 * Through Drizzle (its `db.transaction`, which sends BEGIN and COMMIT as statements of their
 * own, and each statement prepared once as the store prepares its own): the lease and the
 * one-transaction design, with no guard and no store code, to show what handing the work a
 * Drizzle transaction costs each of them.
 *
 * SQLite, the same way with raw better-sqlite3 on a WAL file (as the store configures it),
 * against the unguarded insert through Drizzle (the denominator of the SQLite goals). The
 * business write in every design is that same Drizzle insert, so each row is in the goal's
 * terms: what the design's own statements add to it.
 * - `lease: two commits`: the claim committed on its own, then BEGIN IMMEDIATE, the fence
 *   check, the insert, the completion, COMMIT (the store's lease model);
 * - `one transaction, as shipped`: the store's statements (src/sqlite/statements.ts): the
 *   read that answers replays without queuing, BEGIN IMMEDIATE, the read under the write
 *   lock, the work's savepoint around the insert, the complete record (an upsert), COMMIT;
 * - `one transaction, claim inside`: BEGIN IMMEDIATE, the claim INSERT, the insert, the
 *   completion, COMMIT (possible on SQLite, whose writes are serialised anyway);
 * - `one transaction, record written last`: BEGIN IMMEDIATE, a look-up, the insert, one
 *   INSERT of the complete record, COMMIT: the least any design that stores the result with
 *   the business write can do;
 * - the replay as shipped: one primary-key SELECT.
 *
 * `npm run bench` runs them too and puts them on docs/benchmarks.md; `npm run bench:designs`
 * runs them alone and prints them. Needs the Postgres of BENCH_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Query, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { migrateSqlite, openSqlite, sqliteStore } from '../src/sqlite/index.js';
import { prepareStatements } from '../src/sqlite/statements.js';
import { idempotencyRecords } from '../src/sqlite/table.js';
import { designStatements } from './db/design-statements.js';
import { benchTables, createTables, dropTables, nodePgDb, postgresBenchDb } from './db/postgres.js';
import { recordWrittenLast, writePayment } from './db/sqlite.js';
import { freshKey } from './keys.js';
import { type GroupOptions, measureGroup, type TimedCase } from './measure.js';

/** The Postgres designs, on tables of their own. */
async function postgresDesigns(): Promise<{ cases: TimedCase[]; close: () => Promise<void> }> {
  const { pool, db } = nodePgDb(4);
  // The merged queries commit an implicit transaction with COMMIT, which Postgres answers with
  // a warning notice; nobody needs to see it.
  pool.on('connect', (client) => client.on('notice', () => {}));
  const tables = benchTables('designs');
  await createTables(db, tables);
  const raw = designStatements(pool, tables);
  const bench = postgresBenchDb(
    pool,
    db,
    tables,
    async () => {
      await dropTables(db, tables);
      await pool.end();
    },
    raw,
  );
  const drizzle = drizzleDesignStatements(tables);

  const fresh = (label: string, design: (key: string) => Promise<unknown>) => () =>
    design(freshKey(label));
  const cases: TimedCase[] = [
    { id: 'baseline: insert in a Drizzle transaction', run: () => bench.insertInTransaction(42) },
    { id: 'baseline: insert, raw BEGIN/COMMIT, no Drizzle', run: raw.baselineRaw },
    {
      id: "baseline: raw BEGIN/COMMIT, the insert through Drizzle's builder",
      run: raw.baselineRawBegin,
    },
    {
      id: 'lease, a round trip per statement (as the store on postgres.js)',
      run: fresh('lease', raw.leaseShipped),
    },
    {
      id: 'lease, four round trips (as the store on a node-postgres Pool)',
      run: fresh('lease4', raw.leaseFourTrips),
    },
    { id: 'lease, three round trips', run: fresh('lease3', raw.leaseThreeTrips) },
    {
      id: 'lease, in a Drizzle transaction',
      run: async () => {
        const key = freshKey('lease-drizzle');
        await drizzle.prepare(db, drizzle.claim).execute({ key });
        await db.transaction(async (tx) => {
          await drizzle.prepare(tx, drizzle.lock).execute({ key });
          await bench.insertTx(tx, 42);
          await drizzle.prepare(tx, drizzle.complete).execute({ key });
        });
      },
    },
    {
      id: 'one transaction, as shipped, a round trip per statement',
      run: fresh('lock', raw.oneTransaction),
    },
    {
      id: 'one transaction, as shipped, three round trips (as the store on a node-postgres Pool)',
      run: fresh('lock3', raw.oneTransactionMerged),
    },
    {
      id: 'one transaction, claim row inside, three round trips',
      run: fresh('inside3', raw.claimInTransactionMerged),
    },
    {
      id: 'one transaction, as shipped, in a Drizzle transaction',
      run: () =>
        db.transaction(async (tx) => {
          const key = freshKey('lock-drizzle');
          await drizzle.prepare(tx, drizzle.begin).execute({ key });
          await drizzle.prepare(tx, drizzle.savepoint).execute({});
          await bench.insertTx(tx, 42);
          await drizzle.prepare(tx, drizzle.finish).execute({ key });
        }),
    },
  ];

  // The first round trip of a fresh call, on its own (see `firstTripBegin`).
  cases.push(
    { id: 'first round trip: BEGIN alone (ROLLBACK after)', run: raw.firstTripBegin },
    {
      id: 'first round trip: BEGIN with a primary-key SELECT of the record (ROLLBACK after)',
      run: () => raw.firstTripRead(freshKey('first-read')),
    },
    {
      id: 'first round trip as shipped, fresh key: BEGIN with _begin and the savepoint (ROLLBACK after)',
      run: () => raw.oneTransactionFirstTrip(freshKey('first-shipped')),
    },
  );

  // Records the replays read: one claimed and completed as the lease designs leave it.
  const replayKey = freshKey('replay');
  await raw.leaseShipped(replayKey);
  cases.push(
    {
      id: 'replay, one transaction as shipped: BEGIN with _begin (ROLLBACK after the answer)',
      run: () => raw.oneTransactionFirstTrip(replayKey),
    },
    { id: "replay, lease: the claim function's call", run: () => raw.claimReplay(replayKey) },
    {
      id: 'replay, lease in three round trips: the merged query, ROLLBACK',
      run: () => raw.leaseThreeTripsReplay(replayKey),
    },
    {
      id: 'replay, claim row inside: BEGIN with the claim (ROLLBACK after the answer)',
      run: () => raw.claimInTransactionReplay(replayKey),
    },
    { id: 'replay floor: a primary-key SELECT', run: () => raw.primaryKeySelect(replayKey) },
  );

  // A duplicate of a key in flight (S10: 409 at once), against an original that stays open
  // for the whole group.
  const inFlightKey = freshKey('in-flight');
  const original = await raw.holdInFlight(inFlightKey);
  cases.push({
    id: 'duplicate in flight, as shipped: _begin finds the lock taken',
    run: () => raw.duplicateInFlight(inFlightKey),
  });
  return {
    cases,
    close: async () => {
      await original.end();
      await bench.close();
    },
  };
}

/**
 * The designs' statements for Drizzle, built once with a `key` placeholder and prepared on a
 * handle's session per call, as the store prepares its own inside a transaction.
 */
function drizzleDesignStatements(tables: { records: string; payments: string }) {
  interface Session {
    prepareQuery(query: Query, ...rest: unknown[]): { execute(values: unknown): Promise<unknown> };
  }
  const dialect = new PgDialect();
  const t = tables.records;
  const key = sql.placeholder('key');
  const fn = (suffix: string) => sql.identifier(`${t}_${suffix}`);
  return {
    prepare: (handle: { _: { session: unknown } }, query: Query) =>
      (handle._.session as Session).prepareQuery(query, undefined, undefined, false),
    claim: dialect.sqlToQuery(
      sql`select * from ${fn('claim')}('bench', ${key}::text, 'f', 'pay', 'tok', 30000, 86400000, true)`,
    ),
    lock: dialect.sqlToQuery(sql`select * from ${fn('lock')}('bench', ${key}::text, 'tok')`),
    complete: dialect.sqlToQuery(
      sql`select ${fn('complete')}('bench', ${key}::text, 'tok', 'committed', '{"id":1}', 86400000)`,
    ),
    // As shipped (src/postgres/statements.ts): a scalar call, not `select * from` (0002 says why).
    begin: dialect.sqlToQuery(
      sql`select ${fn('begin')}('bench', ${key}::text, 'f') as mutation_guard_begin`,
    ),
    savepoint: dialect.sqlToQuery(sql.raw('savepoint mutation_guard_work')),
    finish: dialect.sqlToQuery(
      sql`select ${fn('finish')}('bench', ${key}::text, 'f', 'pay', 'tok', false, 'committed', '{"id":1}', 86400000)`,
    ),
  };
}

/** The SQLite designs on a WAL file of their own. */
function sqliteDesigns(): { cases: TimedCase[]; close: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-designs-'));
  const lite = openSqlite(join(dir, 'designs.db'));
  migrateSqlite(lite);
  // WAL and synchronous = NORMAL, as the store configures its connection.
  sqliteStore(lite);
  const c = lite.$client;
  c.exec('create table payments (id integer primary key, amount integer not null, note text)');
  const pay = c.prepare("insert into payments (amount, note) values (?, 'bench')");
  /** The business write in the goals' terms: one row through Drizzle's query builder. */
  const write = () => writePayment(lite, 42);
  const claim = c.prepare(
    `insert into idempotency_records (scope, key, fingerprint, operation, state, token,
      lease_expires_at, expires_at, created_at)
     values ('bench', ?, 'f', 'pay', 'in_flight', 'tok', ?, ?, ?) on conflict (scope, key) do nothing`,
  );
  const holds = c.prepare(
    "select 1 from idempotency_records where scope = 'bench' and key = ? and token = 'tok' and state = 'in_flight'",
  );
  const complete = c.prepare(
    `update idempotency_records set state = 'complete', outcome = 'committed', result = '{"id":1}',
       completed_at = ?, expires_at = ?, lease_expires_at = null
     where scope = 'bench' and key = ? and token = 'tok' and state = 'in_flight'`,
  );
  const record = c.prepare(
    `insert into idempotency_records (scope, key, fingerprint, operation, state, token, outcome,
      result, expires_at, created_at, completed_at)
     values ('bench', ?, 'f', 'pay', 'complete', 'tok', 'committed', '{"id":1}', ?, ?, ?)`,
  );
  const begin = c.prepare('begin immediate');
  const commit = c.prepare('commit');
  // The store's own prepared statements: what it runs is what this design measures.
  const shipped = prepareStatements(c, idempotencyRecords);
  const recordLast = recordWrittenLast(lite);
  const day = 86_400_000;
  const replayKey = freshKey('lite-replay');
  const written = Date.now();
  record.run(replayKey, written + day, written, written);
  const cases: TimedCase[] = [
    // The goals' own denominator: the bench's unguarded insert (bench/db/sqlite.ts).
    { id: 'baseline: insert through Drizzle', run: async () => write() },
    { id: 'baseline: insert, raw', run: async () => pay.run(42) },
    {
      id: 'lease: two commits (0.1.0 to now)',
      run: async () => {
        const key = freshKey('lite');
        const now = Date.now();
        claim.run(key, now + 30_000, now + day, now);
        begin.run();
        holds.get(key);
        write();
        complete.run(now, now + day, key);
        commit.run();
      },
    },
    {
      id: 'one transaction, as shipped',
      run: async () => {
        const key = freshKey('lite0');
        const now = Date.now();
        shipped.select.get('bench', key);
        shipped.begin.run();
        shipped.select.get('bench', key);
        shipped.workBegin.run();
        write();
        shipped.workEnd.run();
        const token = randomUUID();
        shipped.finish.run(
          'bench',
          key,
          'f',
          'pay',
          token,
          'committed',
          '{"id":1}',
          now + day,
          now,
          now,
          0,
        );
        shipped.commit.run();
      },
    },
    {
      id: 'one transaction, claim inside',
      run: async () => {
        const key = freshKey('lite1');
        const now = Date.now();
        begin.run();
        claim.run(key, now + 30_000, now + day, now);
        write();
        complete.run(now, now + day, key);
        commit.run();
      },
    },
    {
      id: 'one transaction, record written last',
      // The same write the framework cases' fresh floor makes (bench/db/sqlite.ts).
      run: async () => recordLast(42, freshKey('lite2')),
    },
    {
      id: 'replay, as shipped: one primary-key SELECT',
      run: async () => shipped.select.get('bench', replayKey),
    },
  ];
  return {
    cases,
    close: () => {
      c.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One design's cost, against the first case of its database (the unguarded baseline). */
export interface DesignResult {
  db: 'postgres' | 'sqlite';
  design: string;
  /** Microseconds per call. */
  median: number;
  p99: number;
  /** ÷ the baseline's median. */
  ratio: number;
}

/** Measures every design, each database's in one interleaved group. */
export async function measureDesigns(options: GroupOptions): Promise<DesignResult[]> {
  const results: DesignResult[] = [];
  const measure = async (db: DesignResult['db'], group: TimedCase[]) => {
    const stats = await measureGroup(group, options);
    const base = stats.get(group[0]!.id)!.median;
    for (const [design, s] of stats) {
      results.push({ db, design, median: s.median, p99: s.p99, ratio: s.median / base });
    }
  };
  const postgres = await postgresDesigns();
  try {
    await measure('postgres', postgres.cases);
  } finally {
    await postgres.close();
  }
  const lite = sqliteDesigns();
  try {
    await measure('sqlite', lite.cases);
  } finally {
    lite.close();
  }
  return results;
}

/** The designs as a Markdown table. */
export function designsTable(results: readonly DesignResult[]): string {
  const lines = [
    '| database | design | median | p99 | × baseline |',
    '| --- | --- | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.db} | ${r.design} | ${r.median.toFixed(0)} µs | ${r.p99.toFixed(0)} µs | ${r.ratio.toFixed(2)}× |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const results = await measureDesigns(
    quick ? { rounds: 3, batchMs: 20, warmup: 10 } : { rounds: 20, batchMs: 40, warmup: 50 },
  );
  console.log(designsTable(results));
}
