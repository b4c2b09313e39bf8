/**
 * S11's second liveness model on SQLite (`claimAndRun`): the claim, the work and the record
 * in one transaction. BEGIN IMMEDIATE takes the database's write lock, so while the
 * transaction is open no other connection (another process sharing the file) can write, and
 * the connection lock (lock.ts) keeps this process's other store operations out. The row is
 * read and judged under that lock, the work runs, and the record is written once, complete,
 * just before COMMIT.
 *
 * Against the lease model this saves a commit per fresh call (the claim's), and a crash frees
 * the key at once: the kernel drops a dead process's file locks as it exits, and the WAL
 * frames it wrote without a commit are never read, so there is no in-flight row to wait out.
 *
 * Duplicates in this process are answered from the ledger (ledger.ts) without queuing: the key
 * is held there, in flight, for the transaction's life. A duplicate from another process
 * waits for the write lock (the busy timeout) like any of its writes, then replays or claims.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { toStoredRecord } from '../store/records.js';
import {
  type ClaimAndRunResult,
  type ClaimRequest,
  LeaseLostError,
  type WorkEnding,
} from '../store/seam.js';
import type { ConnectionLedger } from './ledger.js';
import type { ConnectionLock } from './lock.js';
import { verdictOn } from './row-verdict.js';
import type { Statements } from './statements.js';
import { undo } from './undo.js';

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
  /** A committed record that answers the claim without queuing (S9, S10), if there is one. */
  standing: (request: ClaimRequest) => ClaimAndRunResult<never> | undefined;
}

/** Builds the store's `claimAndRun` over the parts of one SQLite store. */
export function oneTransactionClaim<Tx>(parts: OneTransactionParts<Tx>) {
  const { client, tx, tableName, lock, ledger, statements, now } = parts;

  return function claimAndRun<T>(
    request: ClaimRequest,
    work: (tx: Tx, claim: { takenOver: boolean }) => Promise<WorkEnding<T>>,
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
      const token = randomUUID();
      let holding = false;
      try {
        const at = now();
        const { scope, key, fingerprint, operation } = request;
        const row = s.select.get(scope, key);
        const verdict = row ? verdictOn(row, fingerprint, at) : undefined;
        if (row && verdict === 'stands') {
          undo(client, level);
          return { status: 'exists', record: toStoredRecord(request, row, at) };
        }
        // In flight, in this process only: no row is written until the work is done.
        ledger.hold(tableName, request, {
          token,
          fingerprint,
          operation,
          leaseExpiresAt: at + request.leaseMs,
          expiresAt: at + request.leaseMs + request.retentionMs,
          createdAt: at,
          running: true,
        });
        holding = true;
        if (work_) client.exec(`SAVEPOINT ${work_}`);
        else s.workBegin.run();
        const ending = await enter(() => work(tx, { takenOver: verdict === 'take-over' }));

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
          token,
          completion.outcome,
          completion.result,
          done + completion.retentionMs,
          at,
          done,
          verdict === undefined ? 0 : 1,
        ).changes;
        // A row appeared that the claim did not see: the write lock should make this
        // impossible, but the primary key decides, and nothing of ours may commit (S8).
        if (written !== 1) throw new LeaseLostError();
        ledger.wrote(tableName, request, level !== undefined);
        commit(client, s, level);
        return { status: 'done', value: ending.value };
      } catch (error) {
        undo(client, level);
        throw error;
      } finally {
        // In the same synchronous step as COMMIT or ROLLBACK: from here the table answers.
        if (holding) ledger.drop(tableName, request, token);
        if (!level) ledger.transactionEnded();
      }
    });
  };
}

/** Ends the level: COMMIT, or RELEASE for a savepoint. */
function commit(client: Database, s: Statements, level: string | undefined): void {
  if (level) client.exec(`RELEASE ${level}`);
  else s.commit.run();
}
