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
import { NodePgSession, NodePgTransaction } from 'drizzle-orm/node-postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { beginRowOf } from '../../src/postgres/begin-answer.js';
import { paymentsTable } from './postgres-payments.js';

export interface DesignTables {
  records: string;
  payments: string;
}

/** A string literal for a merged (simple-protocol) query. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Each design's statements for one fresh key (or one replay), on a node-postgres Pool. */
export function designStatements(pool: pg.Pool, tables: DesignTables) {
  const t = tables.records;
  const rawInsert = `insert into ${tables.payments} (amount, note) values ($1, $2) returning id`;
  const payments = paymentsTable(tables.payments);
  const dialect = new PgDialect();
  /** The business write, as the baseline makes it (see above), on `client`'s transaction. */
  const insertPayment = async (client: pg.PoolClient, amount = 42): Promise<number> => {
    const tx = new NodePgTransaction(
      dialect,
      new NodePgSession(client, dialect, undefined),
      undefined,
    );
    const rows = await tx
      .insert(payments)
      .values({ amount, note: 'bench' })
      .returning({ id: payments.id });
    return rows[0]!.id;
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
   * The shipped one-transaction claim's first query (src/postgres/pool-transaction.ts): BEGIN,
   * `_begin` (the request's and the key's advisory locks, then the record), the savepoint.
   */
  const beginShipped = (key: string) =>
    `${begin}; select "${t}_begin"('bench', ${literal(key)}, 'f') as mutation_guard_begin; savepoint mutation_guard_work`;
  /** Its last: the record written once, complete (`_finish`), with COMMIT. */
  const finishAndCommit = (key: string) =>
    `select 1 / ("${t}_finish"('bench', ${literal(key)}, 'f', 'pay', false, 'committed', '{"id":1}', 86400000))::int; commit`;

  async function onOneClient<T>(steps: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      return await steps(client);
    } finally {
      client.release();
    }
  }

  /**
   * A merged design in three round trips, as many as the baseline: `first(key)` (whatever
   * the design sends up to and including its claim or lock), the insert, `last(key)` (the
   * completion with COMMIT). Resolves to the new row's id, as the baseline's insert does.
   */
  const threeTrips =
    (first: (key: string) => string, last: (key: string) => string) =>
    (key: string, amount?: number) =>
      onOneClient(async (c) => {
        await c.query(first(key));
        const id = await insertPayment(c, amount);
        await c.query(last(key));
        return id;
      });

  /**
   * A replay in a one-transaction design: `first` finds the record, so the answer is known
   * after one round trip; the ROLLBACK of the empty transaction (and the client's return to the
   * pool) goes on after the caller has it.
   */
  async function answeredAfterFirst(first: string): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query(first);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    void client.query('rollback').then(
      () => client.release(),
      (error: Error) => client.release(error),
    );
  }

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
    leaseThreeTrips: threeTrips(claimThenLock, completeAndCommit),

    /** A replay in the three-trip lease: the same first query, then ROLLBACK of what it began. */
    leaseThreeTripsReplay: (key: string) =>
      onOneClient(async (c) => {
        await c.query(claimThenLock(key));
        await c.query('rollback');
      }),

    /**
     * The one-transaction claim as shipped, one statement per round trip (as postgres.js
     * would send it without pipelining): BEGIN, `_begin`, the savepoint, the insert,
     * `_finish`, COMMIT. No lease, no in-flight row; the primary key stops a second commit.
     */
    oneTransaction: (key: string) =>
      onOneClient(async (c) => {
        await c.query(begin);
        await c.query(`select "${t}_begin"($1, $2, 'f')`, ['bench', key]);
        await c.query('savepoint mutation_guard_work');
        await insertPayment(c);
        await c.query(
          `select "${t}_finish"($1, $2, 'f', 'pay', false, 'committed', '{"id":1}', 86400000)`,
          ['bench', key],
        );
        await c.query('commit');
      }),

    /**
     * The same in three round trips, as the store sends it on a node-postgres Pool: BEGIN with
     * `_begin` and the savepoint, the insert, `_finish` with COMMIT.
     */
    oneTransactionMerged: threeTrips(beginShipped, finishAndCommit),

    /**
     * That design's first round trip (BEGIN, `_begin`, the savepoint), answered after it; the
     * ROLLBACK of the transaction (and the client's return to the pool) goes on after the
     * caller has its answer. On a key with a record it is a replay whole: the answer is known
     * after this one round trip. On a fresh key it is the claim's first round trip alone.
     */
    oneTransactionFirstTrip: (key: string) => answeredAfterFirst(beginShipped(key)),

    /**
     * The claim row inside the business transaction (the claim function, its commit being the
     * business transaction's): BEGIN with the claim, the insert, the completion with COMMIT.
     * Uncontended here; a concurrent duplicate's INSERT would wait on the uncommitted row
     * (it needs a short `lock_timeout`, or an advisory lock as a hint, to answer at once).
     */
    claimInTransactionMerged: threeTrips(beginWithClaim, completeAndCommit),

    /**
     * A replay in that design: BEGIN with the claim, which finds the record; the answer is
     * known after this one round trip, so the ROLLBACK of the empty transaction (and the
     * client's return to the pool) goes on after the caller has its answer.
     */
    claimInTransactionReplay: (key: string) => answeredAfterFirst(beginWithClaim(key)),

    /**
     * An original in flight, for the duplicate case below: a transaction on a client of its
     * own that has claimed `key` with `_begin` (holding its locks), open until `end` rolls it
     * back.
     */
    holdInFlight: async (key: string) => {
      const client = await pool.connect();
      await client.query(beginShipped(key));
      return {
        end: async () => {
          await client.query('rollback');
          client.release();
        },
      };
    },

    /**
     * A duplicate of that original: its `_begin` finds the request's lock taken and answers
     * `busy` at once, then the empty transaction rolls back; the guard would answer 409.
     */
    duplicateInFlight: (key: string) =>
      onOneClient(async (c) => {
        const [, begun] = (await c.query(beginShipped(key))) as unknown as pg.QueryResult[];
        await c.query('rollback');
        const status = beginRowOf(begun?.rows[0])?.status;
        if (status !== 'busy') {
          throw new Error(`design: a duplicate of a key in flight got ${status}`);
        }
      }),

    /**
     * The first round trip of a fresh call alone, beside the shipped one
     * (`oneTransactionFirstTrip` on a fresh key), each answered after it (the ROLLBACK after,
     * as for a replay): `BEGIN` alone (what the baseline's first round trip sends), and `BEGIN`
     * with a primary-key `SELECT` of the record (the least a design that reads the record in
     * its transaction sends). What the claim costs the server beside a plain read.
     */
    firstTripBegin: () => answeredAfterFirst(begin),
    firstTripRead: (key: string) =>
      answeredAfterFirst(
        `${begin}; select fingerprint, outcome, result from "${t}" where scope = 'bench' and key = ${literal(key)}`,
      ),

    /** The lease model's replay: one call of the claim function. */
    claimReplay: (key: string) => pool.query(claim, ['bench', key]),

    /** The least any replay reads: the record by primary key. */
    primaryKeySelect: (key: string) =>
      pool.query(`select fingerprint, outcome, result from "${t}" where scope = $1 and key = $2`, [
        'bench',
        key,
      ]),
  };
}
