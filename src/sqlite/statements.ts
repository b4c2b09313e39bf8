/**
 * Every statement of the SQLite store (SPEC S7, S8, S11, S14), prepared once per store on its
 * connection; each call only binds its values. Raw better-sqlite3 statements: Drizzle's query
 * builder would rebuild and re-prepare each one on every call.
 *
 * Column names are written out, as in the Postgres store's statements and functions: every
 * records table, whatever its name, has the columns of table.ts. Only the table's name
 * varies, and it is checked (store/table-name.ts) before it reaches SQL. Times are integer
 * milliseconds (table.ts); rows come back as the shared `RecordRow`.
 */
import type { Database, Statement } from 'better-sqlite3';
import { getTableName } from 'drizzle-orm';
import type { RecordRow } from '../store/records.js';
import type { SqliteIdempotencyTable } from './table.js';

export interface Statements {
  begin: Statement;
  commit: Statement;
  /** The one-transaction claim's work runs inside this savepoint, so a kept error can undo it. */
  workBegin: Statement;
  workEnd: Statement;
  workUndo: Statement;
  /** S7: the claim. Positional: scope, key, fingerprint, operation, token, lease, expires, at. */
  insert: Statement;
  select: Statement<[string, string], RecordRow>;
  /** S11: takes over an in-flight claim whose lease ran out (compare-and-set). */
  takeOver: Statement;
  /** S14: claims a complete record past its retention afresh (compare-and-set). */
  reuse: Statement;
  holds: Statement<[string, string, string], number>;
  complete: Statement;
  release: Statement;
  /**
   * The one-transaction claim's record, written once, complete (S7, S8). Positional: scope,
   * key, fingerprint, operation, token, outcome, result, expires, created, completed, and
   * whether an existing row may be replaced (1: the one the claim read and judged free).
   */
  finish: Statement;
  purge: Statement;
}

/** The savepoint a one-transaction claim runs its work in (a nested level names its own). */
export const WORK_SAVEPOINT = 'mutation_guard_work';

/** Prepares every statement for `table` on `client`; the table must exist. */
export function prepareStatements(client: Database, table: SqliteIdempotencyTable): Statements {
  const t = `"${getTableName(table)}"`;
  const byKey = 'scope = ? AND key = ?';
  /** The fence: the record is in flight under our token (SPEC S8). */
  const held = `${byKey} AND token = ? AND state = 'in_flight'`;
  /** A fresh claim over an existing row: fingerprint, operation, token, lease, expires, at. */
  const setClaim =
    "fingerprint = ?, operation = ?, state = 'in_flight', token = ?, outcome = NULL, result = NULL, lease_expires_at = ?, expires_at = ?, created_at = ?, completed_at = NULL";
  return {
    begin: client.prepare('BEGIN IMMEDIATE'),
    commit: client.prepare('COMMIT'),
    workBegin: client.prepare(`SAVEPOINT ${WORK_SAVEPOINT}`),
    workEnd: client.prepare(`RELEASE ${WORK_SAVEPOINT}`),
    workUndo: client.prepare(`ROLLBACK TO ${WORK_SAVEPOINT}`),
    insert: client.prepare(
      `INSERT INTO ${t} (scope, key, fingerprint, operation, state, token, lease_expires_at, expires_at, created_at) VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING`,
    ),
    select: client.prepare<[string, string], RecordRow>(
      `SELECT fingerprint, operation, state, outcome, result, lease_expires_at AS lease_expires_ms, expires_at AS expires_ms, created_at AS created_ms FROM ${t} WHERE ${byKey}`,
    ),
    takeOver: client.prepare(
      `UPDATE ${t} SET ${setClaim} WHERE ${byKey} AND state = 'in_flight' AND lease_expires_at <= ? AND (fingerprint = ? OR expires_at <= ?)`,
    ),
    reuse: client.prepare(
      `UPDATE ${t} SET ${setClaim} WHERE ${byKey} AND state = 'complete' AND expires_at <= ?`,
    ),
    holds: client
      .prepare<[string, string, string], number>(`SELECT 1 FROM ${t} WHERE ${held}`)
      .pluck(),
    complete: client.prepare(
      `UPDATE ${t} SET state = 'complete', outcome = ?, result = ?, completed_at = ?, expires_at = ?, lease_expires_at = NULL WHERE ${held}`,
    ),
    release: client.prepare(`DELETE FROM ${t} WHERE ${held}`),
    finish: client.prepare(
      `INSERT INTO ${t} (scope, key, fingerprint, operation, state, token, outcome, result, lease_expires_at, expires_at, created_at, completed_at) VALUES (?, ?, ?, ?, 'complete', ?, ?, ?, NULL, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation, state = 'complete', token = excluded.token, outcome = excluded.outcome, result = excluded.result, lease_expires_at = NULL, expires_at = excluded.expires_at, created_at = excluded.created_at, completed_at = excluded.completed_at WHERE ?`,
    ),
    purge: client.prepare(
      `DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE expires_at <= ? LIMIT ?)`,
    ),
  };
}
