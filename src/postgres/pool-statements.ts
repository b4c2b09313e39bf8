/**
 * The store's own autocommit statements (claim, read, completion after a rollback, release,
 * purge) on a node-postgres Pool, sent with the pool's `query` itself instead of through
 * Drizzle's prepared query.
 *
 * Drizzle's `execute` on a Pool ends in the same `pool.query(text, values)`; what it does
 * first (placeholder filling, tracing spans, the query-cache hook, per-query type parsers)
 * cost 40-70 µs per statement on this project's bench machine, about a fifth of a replay's
 * whole claim round trip (one interleaved run of the claim both ways, CHANGELOG). The SQL and
 * its parameters are the ones statements.ts builds, unchanged: values go in as parameters in
 * the order of the statement's placeholders, worked out once per statement.
 *
 * Drizzle's logger (`drizzle({ logger })`) still sees every statement, as before: it is
 * called with the same text and values.
 *
 * Type parsing: our statements return text, booleans, integers and float8 only (times are
 * epoch milliseconds, statements.ts), which node-postgres's default parsers turn into the
 * same strings, booleans and numbers Drizzle's raw path gives. Errors reach the caller as
 * node-postgres's own `DatabaseError` (SQLSTATE on `code`), not wrapped in Drizzle's
 * `DrizzleQueryError`; every reader of a code here walks the cause chain from the error
 * itself, so both shapes read the same.
 */
import { is, Placeholder, type Query } from 'drizzle-orm';
import type { AnyPgDatabase } from './db.js';

/** The part of a pg-pool `Pool` used here and by pool-transaction.ts. */
export interface PgPool {
  connect(): Promise<unknown>;
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
  totalCount: number;
}

/** One of the store's statements, run on the Pool with named values. */
export type PoolStatement = <Row>(values: Record<string, unknown>) => Promise<Row[]>;

/** Drizzle's logger, as a session holds it. */
interface QueryLogger {
  logQuery(query: string, params: unknown[]): void;
}

/** The node-postgres Pool under a Drizzle database, or undefined for any other client. */
export function nodePgPool(db: AnyPgDatabase): PgPool | undefined {
  const client = (db._.session as unknown as { client?: unknown }).client;
  return isPool(client) ? client : undefined;
}

/**
 * `query` as a statement on the Pool of `db` (see `nodePgPool`): its placeholders' order is
 * read once, here.
 */
export function poolStatement(db: AnyPgDatabase, pool: PgPool, query: Query): PoolStatement {
  const { logger } = db._.session as unknown as { logger?: QueryLogger };
  const order = query.params.map((param) => (is(param, Placeholder) ? param.name : undefined));
  return async <Row>(values: Record<string, unknown>) => {
    const ordered = order.map((name, index) => {
      if (name === undefined) return query.params[index];
      if (!(name in values)) {
        throw new TypeError(`mutation-guard/postgres: no value for the parameter "${name}".`);
      }
      return values[name];
    });
    logger?.logQuery(query.sql, ordered);
    return (await pool.query(query.sql, ordered)).rows as Row[];
  };
}

function isPool(client: unknown): client is PgPool {
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof (client as PgPool).connect === 'function' &&
    typeof (client as PgPool).query === 'function' &&
    'totalCount' in client
  );
}
