/**
 * A record as both Drizzle stores' statements return it, and the `StoredRecord` it stands for.
 * Times are epoch milliseconds on both dialects: SQLite stores them so (sqlite/table.ts), and
 * Postgres's statements convert its timestamptz columns (postgres/statements.ts).
 */
import type { RecordKey, RecordOutcome, StoredRecord } from './seam.js';

/** A record's columns, under the names both dialects' statements give them. */
export interface RecordRow {
  fingerprint: string;
  operation: string;
  outcome: RecordOutcome;
  result: string;
  expires_ms: number;
  created_ms: number;
}

/**
 * The record of `row`, read at `readAtMs` on the store's clock: the guard compares the
 * record's times with that reading, never with its own clock (S11).
 */
export function toStoredRecord(
  { scope, key }: RecordKey,
  row: RecordRow,
  readAtMs: number,
): StoredRecord {
  return {
    scope,
    key,
    fingerprint: row.fingerprint,
    operation: row.operation,
    outcome: row.outcome,
    result: row.result,
    expiresAt: new Date(row.expires_ms),
    createdAt: new Date(row.created_ms),
    readAt: new Date(readAtMs),
  };
}
