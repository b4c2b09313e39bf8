/**
 * The answer of the claim, `<table>_begin` (drizzle/postgres/0000_init.sql says what each
 * status means), and how the store reads it (SPEC S7, S9, S10). Read the same way by every
 * path that sends the claim: Drizzle's prepared statements and postgres.js in store.ts, the
 * node-postgres Pool's merged queries in pool-transaction.ts.
 */
import { type RecordRow, toStoredRecord } from '../store/records.js';
import type { ClaimAndRunResult, RecordKey } from '../store/seam.js';

/**
 * A record as our statements return it: the shared row (times as epoch milliseconds, float8)
 * and `read_ms`, the database clock when it was read (S11).
 */
export interface PgRecordRow extends RecordRow {
  read_ms: number;
}

/** The claim function's statuses. */
export type BeginStatus = 'claimed' | 'exists' | 'busy' | 'reused';

/**
 * The claim's answer: its status, whether `_finish` overwrites a row it holds locked
 * (`replace`), and the record that stands when `exists`.
 */
export interface BeginRow extends Partial<PgRecordRow> {
  status: BeginStatus;
  replace: boolean;
}

/** The column of the claim's answer in the statements that call it. */
export const BEGIN_ANSWER = 'mutation_guard_begin';

/**
 * The row of the statement that calls the claim: its answer, one JSON object as text (the
 * migration says why a scalar), read by `beginRowOf`.
 */
export interface BeginCall {
  [BEGIN_ANSWER]: string;
}

/**
 * The claim's answer from its statement's row; `undefined` when there is none. An answer this
 * version cannot read (a `_begin` of another shape) is an error that says what to do, never
 * the answer itself: it may hold a stored result (S26).
 */
export function beginRowOf(row: unknown): BeginRow | undefined {
  const answer = (row as Partial<BeginCall> | undefined)?.[BEGIN_ANSWER];
  if (answer === undefined) return undefined;
  const parsed = typeof answer === 'string' ? parsedJson(answer) : undefined;
  if (typeof parsed?.status !== 'string') {
    throw new Error(
      "mutation-guard/postgres: the begin function answered in a shape this version does not read; apply this version's functions (migratePostgres, or postgresFunctionsSql() if drizzle-kit owns the table: docs/migrations.md).",
    );
  }
  return parsed as BeginRow;
}

function parsedJson(text: string): Partial<BeginRow> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the claim found, as `claimAndRun` answers it; `undefined` when the key is ours and the
 * work runs.
 */
export function beginAnswer(
  request: RecordKey,
  row: BeginRow | undefined,
): Exclude<ClaimAndRunResult<never>, { status: 'done' }> | undefined {
  switch (row?.status) {
    case 'claimed':
      return undefined;
    case 'exists': {
      const record = row as BeginRow & PgRecordRow;
      return { status: 'exists', record: toStoredRecord(request, record, record.read_ms) };
    }
    case 'busy':
      return { status: 'in_flight', sameRequest: true };
    case 'reused':
      return { status: 'in_flight', sameRequest: false };
    default:
      throw new Error(
        `mutation-guard/postgres: unexpected answer from the begin function: ${JSON.stringify(row?.status)}.`,
      );
  }
}
