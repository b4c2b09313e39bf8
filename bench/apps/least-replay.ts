/**
 * The least any guarding middleware or plugin does to answer a replay, with no guard: the
 * adapters' replay floor (bench/cases/surfaces.ts). Once the adapter has taken the request's
 * key and digest (least-request.ts), it reads the record (one primary-key read, the store's
 * own `read`) and hands back the stored result as text. The adapter then parses it, marks its
 * response as a replay (S9) and answers without running the resolver.
 *
 * It does less than any guard could, so that nothing a guarded replay could save is in it: it
 * checks no lease, expiry or scope, and compares no digest.
 */
import type { StoreExtras } from '../../src/store/index.js';
import type { BenchDb } from '../db/types.js';

/** The scope the bench's guarded servers store their records under. */
const SCOPE = 'bench';

export function leastReplayLookup<Tx>(db: BenchDb<Tx>): (key: string) => Promise<string> {
  const store = db.store as BenchDb<Tx>['store'] & StoreExtras;
  return async (key) => {
    const record = await store.read({ scope: SCOPE, key });
    if (!record) throw new Error('bench: the replay record is missing');
    return record.result;
  };
}
