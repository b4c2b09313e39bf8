/**
 * A store of the lease model in memory, for the core's tests: what a store written against
 * the seam without `claimAndRun` gives the guard (SPEC S7, S8, S11, S12). Its transaction
 * keeps business writes aside and applies them, with a completion made through it, only when
 * the work returns; `fail` makes one of its steps throw, as a store that broke would.
 */
import {
  type ClaimRequest,
  type CompletionRecord,
  type Fence,
  type IdempotencyStore,
  LeaseLostError,
  type StoredRecord,
} from '../../src/store/seam.js';

/** The transaction handle: business writes, applied at commit. */
export interface MemoryTx {
  writes: string[];
}

type Step = 'claim' | 'transaction' | 'complete' | 'release';

export interface LeaseStore extends IdempotencyStore<MemoryTx> {
  records: Map<string, StoredRecord & { token: string | null }>;
  /** Business rows committed. */
  committed: string[];
  /** Every call, by step. */
  calls: { step: Step | 'purge'; fence?: Fence; completion?: CompletionRecord }[];
  /** Makes the step throw this error, every time, until set back. */
  fail: Partial<Record<Step, Error>>;
  /** Makes `complete` answer false, as for a claim taken over. */
  lost: boolean;
}

const id = ({ scope, key }: { scope: string; key: string }) => `${scope}\u0000${key}`;

export function leaseStore(): LeaseStore {
  let tokens = 0;
  const store: LeaseStore = {
    records: new Map(),
    committed: [],
    calls: [],
    fail: {},
    lost: false,

    async claim(request: ClaimRequest) {
      store.calls.push({ step: 'claim' });
      if (store.fail.claim) throw store.fail.claim;
      const now = new Date();
      const found = store.records.get(id(request));
      const takeOver =
        found &&
        (found.expiresAt <= now ||
          (found.state === 'in_flight' &&
            found.leaseExpiresAt! <= now &&
            found.fingerprint === request.fingerprint));
      if (found && !takeOver) return { status: 'exists', record: { ...found, readAt: now } };
      const token = `t${++tokens}`;
      store.records.set(id(request), {
        scope: request.scope,
        key: request.key,
        fingerprint: request.fingerprint,
        operation: request.operation,
        state: 'in_flight',
        outcome: null,
        result: null,
        token,
        leaseExpiresAt: new Date(now.getTime() + request.leaseMs),
        expiresAt: new Date(now.getTime() + request.leaseMs + request.retentionMs),
        createdAt: now,
        readAt: now,
      });
      return { status: 'claimed', token, takenOver: Boolean(found?.state === 'in_flight') };
    },

    async transaction(fence, work) {
      store.calls.push({ step: 'transaction', fence });
      if (store.fail.transaction) throw store.fail.transaction;
      if (!holds(fence)) throw new LeaseLostError();
      const tx: MemoryTx = { writes: [] };
      const pending: (() => void)[] = [];
      const value = await work(Object.assign(tx, { pending }));
      store.committed.push(...tx.writes);
      for (const apply of pending) apply();
      return value;
    },

    async complete(fence, completion, tx) {
      store.calls.push({ step: 'complete', fence, completion });
      if (store.fail.complete) throw store.fail.complete;
      if (store.lost || !holds(fence)) return false;
      const apply = () => {
        const record = store.records.get(id(fence))!;
        Object.assign(record, {
          state: 'complete',
          outcome: completion.outcome,
          result: completion.result,
          leaseExpiresAt: null,
          expiresAt: new Date(Date.now() + completion.retentionMs),
        });
      };
      if (tx) (tx as MemoryTx & { pending: (() => void)[] }).pending.push(apply);
      else apply();
      return true;
    },

    async release(fence) {
      store.calls.push({ step: 'release', fence });
      if (store.fail.release) throw store.fail.release;
      if (!holds(fence)) return false;
      store.records.delete(id(fence));
      return true;
    },

    async purge() {
      store.calls.push({ step: 'purge' });
      return 0;
    },
  };

  function holds(fence: Fence): boolean {
    const record = store.records.get(id(fence));
    return record?.state === 'in_flight' && record.token === fence.token;
  }
  return store;
}
