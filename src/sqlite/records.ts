/** Turns a row of the idempotency table into the store interface's `StoredRecord`. */
import type { RecordOutcome, RecordState, StoredRecord } from '../store.js';

/** A row as the prepared `SELECT` returns it: times are integer milliseconds (table.ts). */
export interface RecordRow {
  fingerprint: string;
  operation: string;
  state: RecordState;
  outcome: RecordOutcome | null;
  result: string | null;
  leaseExpiresAt: number | null;
  expiresAt: number;
  createdAt: number;
}

export function toStoredRecord(
  scope: string,
  key: string,
  row: RecordRow,
  readAt: number,
): StoredRecord {
  return {
    scope,
    key,
    fingerprint: row.fingerprint,
    operation: row.operation,
    state: row.state,
    outcome: row.outcome,
    result: row.result,
    leaseExpiresAt: row.leaseExpiresAt === null ? null : new Date(row.leaseExpiresAt),
    expiresAt: new Date(row.expiresAt),
    createdAt: new Date(row.createdAt),
    readAt: new Date(readAt),
  };
}
