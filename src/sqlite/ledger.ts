/**
 * What this process knows about its SQLite connection without asking it, so that a duplicate
 * or a replay need not queue behind an unrelated guarded transaction (SPEC S10, S23).
 *
 * The store is single-process by design, so every claim made through this connection is made
 * here: the ledger remembers the keys live work holds, for its transaction's life. And
 * better-sqlite3 is synchronous, so a SELECT can run on the connection between two statements
 * of another request's open transaction. Such a read is part of that transaction and sees its
 * uncommitted writes; it is safe only for a record the open transaction has not written.
 * For any other record it sees exactly what is committed: a transaction sees the committed
 * database plus its own changes, and while BEGIN IMMEDIATE holds the write lock no other
 * connection can commit, so nothing newer exists. A plain SELECT changes nothing, so it
 * cannot alter what the open transaction commits or rolls back. The ledger therefore also
 * remembers which records the connection's open transaction wrote through the store (records
 * of calls nested in guarded work, purges); those are asked about only after the transaction
 * ends. Writes the work makes to the idempotency table itself, bypassing the store, are not
 * seen: the work must not do that.
 */
import type { RecordKey } from '../store/seam.js';
import { perConnection } from './db.js';

/** A key that live work in this process holds: its transaction is open (S11). */
export interface HeldKey {
  fingerprint: string;
  /** When it was claimed, on the store's clock (milliseconds). */
  claimedAt: number;
}

/** Every record of `table` (a purge run inside a transaction touches rows it cannot name). */
const WHOLE_TABLE = '\u0000*';

export class ConnectionLedger {
  readonly #held = new Map<string, HeldKey>();
  readonly #uncommitted = new Set<string>();

  /** The hold on `record`'s key, if live work in this process has it. */
  held(table: string, record: RecordKey): HeldKey | undefined {
    return this.#held.get(id(table, record));
  }

  hold(table: string, record: RecordKey, held: HeldKey): void {
    this.#held.set(id(table, record), held);
  }

  /** Forgets the hold `held`: its work is over (committed or rolled back). */
  drop(table: string, record: RecordKey, held: HeldKey): void {
    const key = id(table, record);
    if (this.#held.get(key) === held) this.#held.delete(key);
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

function id(table: string, { scope, key }: RecordKey): string {
  return JSON.stringify([table, scope, key]);
}

/** One ledger per connection, shared by every store on it. */
export const connectionLedger = perConnection(() => new ConnectionLedger());
