/** Turns a row of the idempotency table into the store interface's `StoredRecord`. */
import type { StoredRecord } from '../store.js';
import type { SqliteIdempotencyTable } from './table.js';

export type IdempotencyRow = SqliteIdempotencyTable['$inferSelect'];

export function toStoredRecord(row: IdempotencyRow, readAt: number): StoredRecord {
  return {
    scope: row.scope,
    key: row.key,
    fingerprint: row.fingerprint,
    operation: row.operation,
    state: row.state,
    outcome: row.outcome,
    result: row.result,
    leaseExpiresAt: row.leaseExpiresAt,
    expiresAt: row.expiresAt,
    readAt: new Date(readAt),
  };
}
