/**
 * The store's merged completions (pool-transaction.ts on a node-postgres Pool, store.ts on
 * postgres.js): the record's statement goes in one simple-protocol query with what must follow
 * it (COMMIT), so it has to stop that query when it wrote nothing. Its statement divides by the
 * record function's answer, `1 / done::int`: a record that was not written fails with
 * division_by_zero, and nothing after it runs (SPEC S8).
 */
import type { RecordOutcome } from '../store/seam.js';
import { hasCode } from './error-chain.js';
import { WORK_SAVEPOINT } from './statements.js';

/** SQLSTATE 22012: what a merged completion that wrote nothing raises. */
const DIVISION_BY_ZERO = '22012';

/**
 * The statement for `call` (the record function's call, true when it wrote): fails when it
 * wrote nothing. For a kept final error (`rolled_back`, S12) the work's writes are rolled back
 * to its savepoint first, in the same query.
 */
export function completingStatement(call: string, outcome: RecordOutcome): string {
  const undo = outcome === 'rolled_back' ? `rollback to savepoint ${WORK_SAVEPOINT}; ` : '';
  return `${undo}select 1 / (${call})::int`;
}

/** Whether `error` is a completing statement's failure because it wrote nothing. */
export function wroteNothing(error: unknown): boolean {
  return hasCode(error, DIVISION_BY_ZERO);
}
