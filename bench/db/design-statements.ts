/**
 * The statements of each Postgres design that bench/designs.ts measures, sent with raw
 * node-postgres and nothing between them (no guard, no Drizzle, no fingerprint, no
 * serializer): what a design costs over the unguarded insert is then the database's own work
 * and the round trips the design needs. The HTTP bench's floor server (bench/server.ts) sends
 * the cheapest of them, so that the same design is measured in process and over HTTP.
 *
 * "Merged" designs send several statements as one simple-protocol query, which takes no
 * parameters: their values go in as literals (the store does so on a node-postgres Pool,
 * src/postgres/pool-transaction.ts).
 */
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { NodePgDb } from './postgres.js';

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

/** A string literal for a merged (simple-protocol) query. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Each design's statements for one fresh key (or one replay), on a node-postgres Pool. */
export function designStatements(pool: pg.Pool, tables: DesignTables) {
  const t = tables.records;
  const probe = probeName(tables);
  const insertPayment = `insert into ${tables.payments} (amount, note) values ($1, $2) returning id`;
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

  async function onOneClient(steps: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await steps(client);
    } finally {
      client.release();
    }
  }

  return {
    /** BEGIN, the insert, COMMIT: the unguarded mutation without Drizzle. */
    baselineRaw: () =>
      onOneClient(async (c) => {
        await c.query('begin');
        await c.query(insertPayment, [42, 'bench']);
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
        await c.query(insertPayment, [42, 'bench']);
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
        await c.query(insertPayment, [42, 'bench']);
        await c.query(completeAndCommit(key));
      });
    },

    /**
     * The lease in three round trips, as few as the baseline: the claim, its COMMIT, BEGIN and
     * the lock as one query. Sent before the claim's answer is known, so a replay begins a
     * transaction too (see `leaseThreeTripsReplay`).
     */
    leaseThreeTrips: (key: string) =>
      onOneClient(async (c) => {
        await c.query(claimThenLock(key));
        await c.query(insertPayment, [42, 'bench']);
        await c.query(completeAndCommit(key));
      }),

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
        await c.query(insertPayment, [42, 'bench']);
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
        await c.query(insertPayment, [42, 'bench']);
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
    claimInTransactionMerged: (key: string) =>
      onOneClient(async (c) => {
        await c.query(beginWithClaim(key));
        await c.query(insertPayment, [42, 'bench']);
        await c.query(completeAndCommit(key));
      }),

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
