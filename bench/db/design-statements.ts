/**
 * The statements of each Postgres design that bench/designs.ts measures, sent with raw
 * node-postgres and nothing between them (no guard, no fingerprint, no serializer): what a
 * design costs over the unguarded insert is then the database's own work and the round trips
 * the design needs. The HTTP bench's floor server (bench/server.ts) sends the cheapest of
 * them, so that the same design is measured in process and over HTTP.
 *
 * The business write is the baseline's own: one row through Drizzle's query builder, here on
 * a Drizzle transaction object over the design's client (as the store hands the work one,
 * src/postgres/pool-transaction.ts). So a design's "× baseline" is its floor in the goal's
 * terms: the goals' baseline builds the same insert, and a guarded call cannot skip it.
 *
 * "Merged" designs send several statements as one simple-protocol query, which takes no
 * parameters: their values go in as literals (the store does so on a node-postgres Pool,
 * src/postgres/pool-transaction.ts).
 */
import { sql } from 'drizzle-orm';
import { NodePgSession, NodePgTransaction } from 'drizzle-orm/node-postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { type NodePgDb, paymentsTable } from './postgres.js';

export interface DesignTables {
  records: string;
  payments: string;
}

/** The one-transaction design's probe function, created beside the records table. */
export function probeName(tables: DesignTables): string {
  return `${tables.records}_probe`;
}

/**
 * Creates the one-transaction design's probe: the key's transaction-scoped advisory lock, then
 * the record, read after the lock is held; one PL/pgSQL function, so that its plan stays
 * cached (as the store's functions do).
 */
export async function createProbe(db: NodePgDb, tables: DesignTables): Promise<void> {
  await db.execute(
    sql.raw(`create or replace function "${probeName(tables)}"(p_scope text, p_key text)
    returns table (locked boolean, state text, result text) language plpgsql as $$
    #variable_conflict use_column
    begin
      if not pg_try_advisory_xact_lock(hashtextextended(length(p_scope) || ':' || p_scope || p_key, 0)) then
        return query select false, null::text, null::text;
        return;
      end if;
      return query select true, r.state, r.result from "${tables.records}" r
        where r.scope = p_scope and r.key = p_key;
      if not found then
        return query select true, null::text, null::text;
      end if;
    end $$`),
  );
}

export async function dropProbe(db: NodePgDb, tables: DesignTables): Promise<void> {
  await db.execute(sql.raw(`drop function if exists "${probeName(tables)}"`));
}

/**
 * The claim-inside design's `lock_timeout`: how long a duplicate of a key in flight waits on
 * the original's uncommitted row before it can answer 409. Short, so that a duplicate answers
 * soon; long enough that an uncontended claim never meets it.
 */
export const DUPLICATE_LOCK_TIMEOUT_MS = 20;

/** SQLSTATE 55P03, what a statement that waited `lock_timeout` for a lock fails with. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A string literal for a merged (simple-protocol) query. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Each design's statements for one fresh key (or one replay), on a node-postgres Pool. */
export function designStatements(pool: pg.Pool, tables: DesignTables) {
  const t = tables.records;
  const probe = probeName(tables);
  const rawInsert = `insert into ${tables.payments} (amount, note) values ($1, $2) returning id`;
  const payments = paymentsTable(tables.payments);
  const dialect = new PgDialect();
  /** The business write, as the baseline makes it (see above), on `client`'s transaction. */
  const insertPayment = (client: pg.PoolClient) => {
    const tx = new NodePgTransaction(
      dialect,
      new NodePgSession(client, dialect, undefined),
      undefined,
    );
    return tx.insert(payments).values({ amount: 42, note: 'bench' }).returning({ id: payments.id });
  };
  const claim = `select * from "${t}_claim"($1, $2, 'f', 'pay', 'tok', 30000, 86400000, true)`;
  const begin = 'begin isolation level read committed';

  // The store's functions with literal values, for the merged queries.
  const claimLiteral = (key: string, asyncCommit: boolean) =>
    `select * from "${t}_claim"('bench', ${literal(key)}, 'f', 'pay', 'tok', 30000, 86400000, ${asyncCommit})`;
  const lockLiteral = (key: string) => `select * from "${t}_lock"('bench', ${literal(key)}, 'tok')`;
  const completeAndCommit = (key: string) =>
    `select "${t}_complete"('bench', ${literal(key)}, 'tok', 'committed', '{"id":1}', 86400000); commit`;
  /** The three-trip lease's first query: the claim, its COMMIT, BEGIN and the lock. */
  const claimThenLock = (key: string) =>
    `${claimLiteral(key, true)}; commit; ${begin}; ${lockLiteral(key)}`;
  /** The claim-inside design's first query: BEGIN with the claim, which commits with the work. */
  const beginWithClaim = (key: string) => `${begin}; ${claimLiteral(key, false)}`;
  /**
   * The same with a short `lock_timeout`: a duplicate whose claim meets the original's
   * uncommitted row fails with 55P03 after it, instead of waiting for the original's commit.
   * Reset in the same query, so that the business writes keep the server's own.
   */
  const beginWithClaimTimeout = (key: string) =>
    `${begin}; set local lock_timeout = '${DUPLICATE_LOCK_TIMEOUT_MS}ms'; ${claimLiteral(key, false)}; set local lock_timeout to default`;

  async function onOneClient(steps: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await steps(client);
    } finally {
      client.release();
    }
  }

  /**
   * A merged design in three round trips, as many as the baseline: `first(key)` (whatever
   * the design sends up to and including its claim or lock), the insert, the completion with
   * COMMIT.
   */
  const threeTrips = (first: (key: string) => string) => (key: string) =>
    onOneClient(async (c) => {
      await c.query(first(key));
      await insertPayment(c);
      await c.query(completeAndCommit(key));
    });

  return {
    /** BEGIN, the insert, COMMIT: the unguarded mutation without Drizzle at all. */
    baselineRaw: () =>
      onOneClient(async (c) => {
        await c.query('begin');
        await c.query(rawInsert, [42, 'bench']);
        await c.query('commit');
      }),

    /**
     * BEGIN and COMMIT raw, the insert through Drizzle's builder: what every design below
     * starts from (the baseline less Drizzle's own BEGIN and COMMIT).
     */
    baselineRawBegin: () =>
      onOneClient(async (c) => {
        await c.query('begin');
        await insertPayment(c);
        await c.query('commit');
      }),

    /**
     * What the store sends on postgres.js and PGlite: the claim, BEGIN, the lock, the insert,
     * the completion, COMMIT, one round trip each.
     */
    leaseShipped: async (key: string) => {
      await pool.query(claim, ['bench', key]);
      await onOneClient(async (c) => {
        await c.query(begin);
        await c.query(`select * from "${t}_lock"($1, $2, 'tok')`, ['bench', key]);
        await insertPayment(c);
        await c.query(`select "${t}_complete"($1, $2, 'tok', 'committed', '{"id":1}', 86400000)`, [
          'bench',
          key,
        ]);
        await c.query('commit');
      });
    },

    /**
     * The lease in four round trips, a replay still one, as the store sends it on a
     * node-postgres Pool: the claim on its own (its answer decides whether a transaction is
     * begun at all), BEGIN with the lock, the insert, the completion with COMMIT.
     */
    leaseFourTrips: async (key: string) => {
      await pool.query(claim, ['bench', key]);
      await onOneClient(async (c) => {
        await c.query(`${begin}; ${lockLiteral(key)}`);
        await insertPayment(c);
        await c.query(completeAndCommit(key));
      });
    },

    /**
     * The lease in three round trips, as few as the baseline: the claim, its COMMIT, BEGIN and
     * the lock as one query. Sent before the claim's answer is known, so a replay begins a
     * transaction too (see `leaseThreeTripsReplay`).
     */
    leaseThreeTrips: threeTrips(claimThenLock),

    /** A replay in the three-trip lease: the same first query, then ROLLBACK of what it began. */
    leaseThreeTripsReplay: (key: string) =>
      onOneClient(async (c) => {
        await c.query(claimThenLock(key));
        await c.query('rollback');
      }),

    /**
     * No lease and no in-flight row: BEGIN, the probe, the insert, one INSERT of the complete
     * record (the primary key still stops a second commit), COMMIT.
     */
    oneTransaction: (key: string) =>
      onOneClient(async (c) => {
        await c.query(begin);
        await c.query(`select * from "${probe}"($1, $2)`, ['bench', key]);
        await insertPayment(c);
        await c.query(
          `insert into "${t}" (scope, key, fingerprint, operation, state, outcome, result, expires_at)
           values ($1, $2, 'f', 'pay', 'complete', 'committed', '{"id":1}', now() + interval '1 day')`,
          ['bench', key],
        );
        await c.query('commit');
      }),

    /** The same in three round trips: BEGIN with the probe, the insert, the record with COMMIT. */
    oneTransactionMerged: (key: string) =>
      onOneClient(async (c) => {
        await c.query(`${begin}; select * from "${probe}"('bench', ${literal(key)})`);
        await insertPayment(c);
        await c.query(
          `insert into "${t}" (scope, key, fingerprint, operation, state, outcome, result, expires_at)
           values ('bench', ${literal(key)}, 'f', 'pay', 'complete', 'committed', '{"id":1}', now() + interval '1 day');
           commit`,
        );
      }),

    /**
     * The claim row inside the business transaction (the claim function, its commit being the
     * business transaction's): BEGIN with the claim, the insert, the completion with COMMIT.
     * Uncontended here; a concurrent duplicate's INSERT would wait on the uncommitted row
     * (it needs a short `lock_timeout`, or an advisory lock as a hint, to answer at once).
     */
    claimInTransactionMerged: threeTrips(beginWithClaim),

    /**
     * A replay in that design: BEGIN with the claim, which finds the record; the answer is
     * known after this one round trip, so the ROLLBACK of the empty transaction (and the
     * client's return to the pool) goes on after the caller has its answer.
     */
    claimInTransactionReplay: async (key: string) => {
      const client = await pool.connect();
      try {
        await client.query(beginWithClaim(key));
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      void client.query('rollback').then(
        () => client.release(),
        (error: Error) => client.release(error),
      );
    },

    /** The claim row inside, its first query with the short `lock_timeout` (uncontended). */
    claimInTransactionTimeoutMerged: threeTrips(beginWithClaimTimeout),

    /**
     * An original in flight, for the duplicate cases below: a transaction on a client of its
     * own that has claimed `key` inside it (an uncommitted row) and holds the key's advisory
     * lock (the probe), open until `end` rolls it back.
     */
    holdInFlight: async (key: string) => {
      const client = await pool.connect();
      await client.query(
        `${beginWithClaim(key)}; select * from "${probe}"('bench', ${literal(key)})`,
      );
      return {
        end: async () => {
          await client.query('rollback');
          client.release();
        },
      };
    },

    /**
     * A duplicate of that original, claim row inside: its claim waits on the uncommitted row
     * until `lock_timeout` (55P03), then rolls back; the guard would answer 409.
     */
    duplicateClaimTimeout: (key: string) =>
      onOneClient(async (c) => {
        const failed = await c.query(beginWithClaimTimeout(key)).then(
          () => undefined,
          (error: { code?: string }) => error,
        );
        await c.query('rollback');
        if (failed?.code !== LOCK_NOT_AVAILABLE) {
          throw new Error(`design: the duplicate's claim did not time out (${failed?.code})`);
        }
      }),

    /**
     * A duplicate of that original, advisory lock: the probe's try-lock fails at once, then
     * the empty transaction rolls back; the guard would answer 409.
     */
    duplicateAdvisory: (key: string) =>
      onOneClient(async (c) => {
        const [, probed] = (await c.query(
          `${begin}; select * from "${probe}"('bench', ${literal(key)})`,
        )) as unknown as pg.QueryResult<{ locked: boolean }>[];
        await c.query('rollback');
        if (probed?.rows[0]?.locked !== false) {
          throw new Error('design: the duplicate took the advisory lock of a key in flight');
        }
      }),

    /** The shipped design's replay: one call of the claim function. */
    claimReplay: (key: string) => pool.query(claim, ['bench', key]),

    /** The least any replay reads: the record by primary key. */
    primaryKeySelect: (key: string) =>
      pool.query(`select fingerprint, state, result from "${t}" where scope = $1 and key = $2`, [
        'bench',
        key,
      ]),
  };
}
