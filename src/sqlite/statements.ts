/**
 * Every statement of the SQLite store (SPEC S7, S8, S14), prepared once per store on its
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
  /** The work runs inside this savepoint, so a kept error can undo it (S12). */
  workBegin: Statement;
  workEnd: Statement;
  workUndo: Statement;
  select: Statement<[string, string], RecordRow>;
  /**
   * The record, written once, complete (S7, S8). Positional: scope, key, fingerprint,
   * operation, outcome, result, expires, created, completed, and whether an existing row may
   * be replaced (1: the one the claim read and judged past its expiry).
   */
  finish: Statement;
  purge: Statement;
}

/** The savepoint the work runs in (a nested level names its own). */
export const WORK_SAVEPOINT = 'mutation_guard_work';

/** Prepares every statement for `table` on `client`; the table must exist. */
export function prepareStatements(client: Database, table: SqliteIdempotencyTable): Statements {
  const t = `"${getTableName(table)}"`;
  return {
    begin: client.prepare('BEGIN IMMEDIATE'),
    commit: client.prepare('COMMIT'),
    workBegin: client.prepare(`SAVEPOINT ${WORK_SAVEPOINT}`),
    workEnd: client.prepare(`RELEASE ${WORK_SAVEPOINT}`),
    workUndo: client.prepare(`ROLLBACK TO ${WORK_SAVEPOINT}`),
    select: client.prepare<[string, string], RecordRow>(
      `SELECT fingerprint, operation, outcome, result, expires_at AS expires_ms, created_at AS created_ms FROM ${t} WHERE scope = ? AND key = ?`,
    ),
    finish: client.prepare(
      `INSERT INTO ${t} (scope, key, fingerprint, operation, outcome, result, expires_at, created_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation, outcome = excluded.outcome, result = excluded.result, expires_at = excluded.expires_at, created_at = excluded.created_at, completed_at = excluded.completed_at WHERE ?`,
    ),
    purge: client.prepare(
      `DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE expires_at <= ? LIMIT ?)`,
    ),
  };
}
