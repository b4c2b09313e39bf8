/**
 * `npm run bench:designs`: the floor of each Postgres design, measured side by side in one
 * interleaved run (bench/measure.ts), against the unguarded mutation in its own Drizzle
 * transaction (the denominator of the Postgres goals, docs/benchmarks.md).
 *
 * Every design sends its statements with raw node-postgres, nothing between them (no guard,
 * no Drizzle, no fingerprint, no serializer), and as few round trips as its protocol allows,
 * so that what it costs over the baseline is the database's work and the round trips the
 * design needs: no client code can make it cheaper than this.
 *
 * - `lease, shipped statements`: the statements the store sends (claim function, BEGIN, lock
 *   function, the insert, complete function, COMMIT), one round trip each;
 * - `lease, merged round trips`: the same work in three round trips, as few as the baseline
 *   (claim + COMMIT + BEGIN + lock as one simple-protocol query; the insert; complete +
 *   COMMIT): what merging statements could save at most;
 * - `one transaction, advisory lock`: no lease and no in-flight row: BEGIN, one function that
 *   takes `pg_try_advisory_xact_lock` on the key and looks the record up, the insert, an
 *   INSERT of the complete record, COMMIT (the design docs/benchmarks.md discusses);
 * - the replays of the shipped design: the claim function, and a plain primary-key SELECT.
 *
 * SQLite, the same way with raw better-sqlite3 on a WAL file (as the store configures it),
 * against the unguarded insert through Drizzle (the denominator of the SQLite goals):
 * - `two commits, as shipped`: the claim committed on its own, then BEGIN IMMEDIATE, the
 *   fence check, the insert, the completion, COMMIT;
 * - `one transaction, claim inside`: BEGIN IMMEDIATE, the claim INSERT, the insert, the
 *   completion, COMMIT (possible on SQLite, whose writes are serialised anyway);
 * - `one transaction, record written last`: BEGIN IMMEDIATE, a look-up, the insert, one
 *   INSERT of the complete record, COMMIT: the least any design that stores the result with
 *   the business write can do.
 *
 * `npm run bench` runs them too and puts them on docs/benchmarks.md; `npm run bench:designs`
 * runs them alone and prints them. Needs the Postgres of BENCH_DATABASE_URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { migrateSqlite, openSqlite, sqliteStore } from '../src/sqlite/index.js';
import { benchTables, createTables, dropTables, nodePgDb, postgresBenchDb } from './db/postgres.js';
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
  const bench = postgresBenchDb(pool, db, tables, async () => {
    await dropTables(db, tables);
    await pool.end();
  });
  const t = tables.records;
  const probe = `${t}_probe`;
  const insertPayment = `insert into ${tables.payments} (amount, note) values ($1, $2) returning id`;
  /** A string literal (the merged queries use the simple protocol, which takes no parameters). */
  const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

  // The one-transaction design's probe: the key's transaction-scoped advisory lock, then the
  // record, read after the lock is held; one function, so that its plan stays cached.
  await db.execute(
    sql.raw(`create or replace function "${probe}"(p_scope text, p_key text)
    returns table (locked boolean, state text, result text) language plpgsql as $$
    #variable_conflict use_column
    begin
      if not pg_try_advisory_xact_lock(hashtextextended(length(p_scope) || ':' || p_scope || p_key, 0)) then
        return query select false, null::text, null::text;
        return;
      end if;
      return query select true, r.state, r.result from "${t}" r
        where r.scope = p_scope and r.key = p_key;
      if not found then
        return query select true, null::text, null::text;
      end if;
    end $$`),
  );

  async function onOneClient(steps: (client: import('pg').PoolClient) => Promise<void>) {
    const client = await pool.connect();
    try {
      await steps(client);
    } finally {
      client.release();
    }
  }

  const cases: TimedCase[] = [
    { id: 'baseline: insert in a Drizzle transaction', run: () => bench.insertInTransaction(42) },
    {
      id: 'baseline: insert, raw BEGIN/COMMIT',
      run: () =>
        onOneClient(async (c) => {
          await c.query('begin');
          await c.query(insertPayment, [42, 'bench']);
          await c.query('commit');
        }),
    },
    {
      id: 'lease, shipped statements',
      run: async () => {
        const key = freshKey('lease');
        await pool.query(
          `select * from "${t}_claim"($1, $2, 'f', 'pay', 'tok', 30000, 86400000, true)`,
          ['bench', key],
        );
        await onOneClient(async (c) => {
          await c.query('begin isolation level read committed');
          await c.query(`select * from "${t}_lock"($1, $2, 'tok')`, ['bench', key]);
          await c.query(insertPayment, [42, 'bench']);
          await c.query(
            `select "${t}_complete"($1, $2, 'tok', 'committed', '{"id":1}', 86400000)`,
            ['bench', key],
          );
          await c.query('commit');
        });
      },
    },
    {
      id: 'lease, merged round trips',
      run: () =>
        onOneClient(async (c) => {
          const key = literal(freshKey('merged'));
          await c.query(
            `select * from "${t}_claim"('bench', ${key}, 'f', 'pay', 'tok', 30000, 86400000, true);
             commit; begin isolation level read committed;
             select * from "${t}_lock"('bench', ${key}, 'tok')`,
          );
          await c.query(insertPayment, [42, 'bench']);
          await c.query(
            `select "${t}_complete"('bench', ${key}, 'tok', 'committed', '{"id":1}', 86400000); commit`,
          );
        }),
    },
    {
      id: 'one transaction, advisory lock',
      run: () =>
        onOneClient(async (c) => {
          const key = freshKey('lock');
          await c.query('begin isolation level read committed');
          await c.query(`select * from "${probe}"($1, $2)`, ['bench', key]);
          await c.query(insertPayment, [42, 'bench']);
          await c.query(
            `insert into "${t}" (scope, key, fingerprint, operation, state, outcome, result, expires_at)
             values ($1, $2, 'f', 'pay', 'complete', 'committed', '{"id":1}', now() + interval '1 day')`,
            ['bench', key],
          );
          await c.query('commit');
        }),
    },
  ];

  const replayKey = freshKey('replay');
  await pool.query(`select * from "${t}_claim"($1, $2, 'f', 'pay', 'tok', 30000, 86400000, true)`, [
    'bench',
    replayKey,
  ]);
  cases.push(
    {
      id: 'replay: the claim function',
      run: () =>
        pool.query(`select * from "${t}_claim"($1, $2, 'f', 'pay', 'tok', 30000, 86400000, true)`, [
          'bench',
          replayKey,
        ]),
    },
    {
      id: 'replay floor: a primary-key SELECT',
      run: () =>
        pool.query(`select fingerprint, state, result from "${t}" where scope = $1 and key = $2`, [
          'bench',
          replayKey,
        ]),
    },
  );
  return {
    cases,
    close: async () => {
      // A fresh client: a failed case may have left its own in an aborted transaction.
      await pool.query(`drop function if exists "${probe}"`).catch(() => {});
      await bench.close();
    },
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
  const look = c.prepare(
    "select state, result from idempotency_records where scope = 'bench' and key = ?",
  );
  const record = c.prepare(
    `insert into idempotency_records (scope, key, fingerprint, operation, state, token, outcome,
      result, expires_at, created_at, completed_at)
     values ('bench', ?, 'f', 'pay', 'complete', 'tok', 'committed', '{"id":1}', ?, ?, ?)`,
  );
  const begin = c.prepare('begin immediate');
  const commit = c.prepare('commit');
  const drizzlePayments = sql`insert into payments (amount, note) values (42, 'bench')`;
  const day = 86_400_000;
  const cases: TimedCase[] = [
    { id: 'baseline: insert through Drizzle', run: async () => lite.run(drizzlePayments) },
    { id: 'baseline: insert, raw', run: async () => pay.run(42) },
    {
      id: 'two commits, as shipped',
      run: async () => {
        const key = freshKey('lite');
        const now = Date.now();
        claim.run(key, now + 30_000, now + day, now);
        begin.run();
        holds.get(key);
        pay.run(42);
        complete.run(now, now + day, key);
        commit.run();
      },
    },
    {
      id: 'one transaction, claim inside',
      run: async () => {
        const key = freshKey('lite1');
        const now = Date.now();
        begin.run();
        claim.run(key, now + 30_000, now + day, now);
        pay.run(42);
        complete.run(now, now + day, key);
        commit.run();
      },
    },
    {
      id: 'one transaction, record written last',
      run: async () => {
        const key = freshKey('lite2');
        const now = Date.now();
        begin.run();
        look.get(key);
        pay.run(42);
        record.run(key, now + day, now, now);
        commit.run();
      },
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
