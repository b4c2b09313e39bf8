/**
 * What this process knows about its SQLite connection without asking it, so that a duplicate
 * or a replay need not queue behind an unrelated guarded transaction (SPEC S10, S23).
 *
 * The store is single-process by design, so every claim made through this connection is made
 * here: the ledger remembers the ones live work still holds. And better-sqlite3 is
 * synchronous, so a SELECT can run on the connection between two statements of another
 * request's open transaction. Such a read is part of that transaction and sees its
 * uncommitted writes; it is safe only for a record the open transaction has not written.
 * For any other record it sees exactly what is committed: a transaction sees the committed
 * database plus its own changes, and while BEGIN IMMEDIATE holds the write lock no other
 * connection can commit, so nothing newer exists. A plain SELECT changes nothing, so it
 * cannot alter what the open transaction commits or rolls back. The ledger therefore also remembers which records the connection's open transaction wrote
 * through the store (claims nested in guarded work, completions, takeovers, releases, purges);
 * those are asked about only after the transaction ends. Writes the work makes to the
 * idempotency table itself, bypassing the store, are not seen: the work must not do that.
 */
import type { RecordKey, StoredRecord } from '../store/seam.js';
import { perConnection } from './db.js';

/** A claim held by live work in this process, as `claim` returned it. */
export interface HeldClaim {
  token: string;
  fingerprint: string;
  operation: string;
  leaseExpiresAt: number;
  expiresAt: number;
  createdAt: number;
  /** True while its transaction is open: the claim stands even past its lease (S11). */
  running: boolean;
}

/** Every record of `table` (a purge run inside a transaction touches rows it cannot name). */
const WHOLE_TABLE = '\u0000*';

export class ConnectionLedger {
  readonly #held = new Map<string, HeldClaim>();
  readonly #uncommitted = new Set<string>();

  /** The claim held on `record`, if it still stands at `at` (its lease, or its transaction). */
  held(table: string, record: RecordKey, at: number): HeldClaim | undefined {
    const claim = this.#held.get(id(table, record));
    return claim && (claim.running || claim.leaseExpiresAt > at) ? claim : undefined;
  }

  hold(table: string, record: RecordKey, claim: HeldClaim): void {
    this.#held.set(id(table, record), claim);
  }

  /** Marks the claim under `token` as inside its open transaction (or not any more). */
  setRunning(table: string, record: RecordKey, token: string, running: boolean): void {
    const claim = this.#held.get(id(table, record));
    if (claim?.token === token) claim.running = running;
  }

  /** Forgets the claim under `token`: its work is over (committed, rolled back or released). */
  drop(table: string, record: RecordKey, token: string): void {
    const key = id(table, record);
    if (this.#held.get(key)?.token === token) this.#held.delete(key);
  }

  /** Notes a store write made while `inTransaction`; `record` undefined: the whole table. */
  wrote(table: string, record: RecordKey | undefined, inTransaction: boolean): void {
    if (inTransaction) this.#uncommitted.add(record ? id(table, record) : table + WHOLE_TABLE);
  }

  /**
   * True when a read of `record` on the connection now sees only committed data: no
   * transaction is open, or the open one has not written it.
   */
  readsCommitted(table: string, record: RecordKey, inTransaction: boolean): boolean {
    if (!inTransaction) {
      this.#uncommitted.clear();
      return true;
    }
    return !this.#uncommitted.has(id(table, record)) && !this.#uncommitted.has(table + WHOLE_TABLE);
  }

  /** The connection's transaction ended (COMMIT or ROLLBACK): its writes are settled. */
  transactionEnded(): void {
    this.#uncommitted.clear();
  }
}

/** The in-flight record a held claim stands for, as the store would have read it at `at`. */
export function heldRecord(record: RecordKey, claim: HeldClaim, at: number): StoredRecord {
  return {
    scope: record.scope,
    key: record.key,
    fingerprint: claim.fingerprint,
    operation: claim.operation,
    state: 'in_flight',
    outcome: null,
    result: null,
    leaseExpiresAt: new Date(claim.leaseExpiresAt),
    expiresAt: new Date(claim.expiresAt),
    createdAt: new Date(claim.createdAt),
    readAt: new Date(at),
  };
}

function id(table: string, { scope, key }: RecordKey): string {
  return JSON.stringify([table, scope, key]);
}

/** One ledger per connection, shared by every store on it. */
export const connectionLedger = perConnection(() => new ConnectionLedger());
