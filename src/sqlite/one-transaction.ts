/**
 * How the SQLite store holds a key (SPEC S7, S8, S11): the claim, the work and the record in
 * one transaction. BEGIN IMMEDIATE takes the database's write lock, so while the transaction
 * is open no other connection (another process sharing the file) can write, and the
 * connection lock (lock.ts) keeps this process's other store operations out. The row is read
 * and judged under that lock, the work runs, and the record is written once, complete, just
 * before COMMIT.
 *
 * A crash frees the key at once: the kernel drops a dead process's file locks as it exits, and
 * the WAL frames it wrote without a commit are never read, so there is no row to wait out.
 *
 * Duplicates in this process are answered from the ledger (ledger.ts) without queuing: the key
 * is held there, in flight, for the transaction's life. A duplicate from another process
 * waits for the write lock (the busy timeout) like any of its writes, then replays or claims.
 */
import type { Database } from 'better-sqlite3';
import { toStoredRecord } from '../store/records.js';
import {
  type ClaimAndRunResult,
  type ClaimRequest,
  KeyTakenError,
  type WorkEnding,
} from '../store/seam.js';
import type { ConnectionLedger, HeldKey } from './ledger.js';
import type { ConnectionLock } from './lock.js';
import type { Statements } from './statements.js';

export interface OneTransactionParts<Tx> {
  client: Database;
  /** What the work receives: on one connection, the open transaction is the database's. */
  tx: Tx;
  tableName: string;
  lock: ConnectionLock;
  ledger: ConnectionLedger;
  statements: () => Statements;
  /** Milliseconds since the epoch, whole. */
  now: () => number;
  /** What answers the claim without queuing (S9, S10), if anything does. */
  standing: (request: ClaimRequest) => ClaimAndRunResult<never> | undefined;
}

/** Builds the store's `claimAndRun` over the parts of one SQLite store. */
export function oneTransactionClaim<Tx>(parts: OneTransactionParts<Tx>) {
  const { client, tx, tableName, lock, ledger, statements, now } = parts;

  return function claimAndRun<T>(
    request: ClaimRequest,
    work: (tx: Tx) => Promise<WorkEnding<T>>,
  ): Promise<ClaimAndRunResult<T>> {
    // A replay, or a duplicate of work running here, never queues behind a transaction.
    const answered = parts.standing(request);
    if (answered) return Promise.resolve(answered);

    return lock.transaction(async ({ depth, enter }): Promise<ClaimAndRunResult<T>> => {
      const s = statements();
      // A guarded call nested in guarded work is a savepoint level of the outer transaction.
      const level = depth > 1 ? `mutation_guard_${depth}` : undefined;
      const work_ = level ? `mutation_guard_work_${depth}` : undefined;
      if (level) client.exec(`SAVEPOINT ${level}`);
      else s.begin.run();
      let held: HeldKey | undefined;
      try {
        const at = now();
        const { scope, key, fingerprint, operation } = request;
        const row = s.select.get(scope, key);
        // S14: a record past its expiry counts as absent, and this transaction replaces it.
        if (row && row.expires_ms > at) {
          undo(client, level);
          return { status: 'exists', record: toStoredRecord(request, row, at) };
        }
        // In flight, in this process only: no row is written until the work is done.
        held = { fingerprint, claimedAt: at };
        ledger.hold(tableName, request, held);
        if (work_) client.exec(`SAVEPOINT ${work_}`);
        else s.workBegin.run();
        const ending = await enter(() => work(tx));

        // From here to COMMIT is synchronous: nothing else of this process runs in between.
        const { completion } = ending;
        if (completion.outcome === 'rolled_back') {
          // S12: a kept final error; the work's writes go, the key stays held for the record.
          if (work_) client.exec(`ROLLBACK TO ${work_}`);
          else s.workUndo.run();
        }
        if (work_) client.exec(`RELEASE ${work_}`);
        else s.workEnd.run();
        const done = now();
        const written = s.finish.run(
          scope,
          key,
          fingerprint,
          operation,
          completion.outcome,
          completion.result,
          done + completion.retentionMs,
          at,
          done,
          row ? 1 : 0,
        ).changes;
        // A row appeared that the claim did not see: the write lock should make this
        // impossible, but the primary key decides, and nothing of ours may commit (S8).
        if (written !== 1) throw new KeyTakenError();
        ledger.wrote(tableName, request, level !== undefined);
        if (level) client.exec(`RELEASE ${level}`);
        else s.commit.run();
        return { status: 'done', value: ending.value };
      } catch (error) {
        undo(client, level);
        throw error;
      } finally {
        // In the same synchronous step as COMMIT or ROLLBACK: from here the table answers.
        if (held) ledger.drop(tableName, request, held);
        if (!level) ledger.transactionEnded();
      }
    });
  };
}

/**
 * Rolls the transaction (or the savepoint `level`) back after a failure. The work's error is
 * what the caller needs, so a failing rollback (SQLite may already have rolled back on its
 * own) must not replace it.
 */
function undo(client: Database, level: string | undefined): void {
  if (!client.inTransaction) return;
  try {
    if (level) {
      client.exec(`ROLLBACK TO ${level}`);
      client.exec(`RELEASE ${level}`);
    } else {
      client.exec('ROLLBACK');
    }
  } catch {
    // Nothing better to do: the original error is rethrown by the caller.
  }
}
