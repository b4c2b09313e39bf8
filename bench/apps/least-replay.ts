/**
 * The least any guarding middleware or plugin does to answer a replay, with no guard: the
 * adapters' replay floor (bench/cases/surfaces.ts). Given the key the request carries and the
 * request as its adapter sees it, it takes one SHA-256 of the request (SPEC S5, S6: a replay
 * answers only the request that stored the record, so whatever answers it hashes the request
 * first), reads the record (one primary-key read, the store's own `read`) and hands
 * back the stored result as text. The adapter then parses it, marks its response as a replay
 * (S9) and answers without running the resolver.
 *
 * It does less than any guard could, so that nothing a guarded replay could save is in it: its
 * digest covers the request's JSON as the adapter has it (S5 asks for a canonical encoding
 * with sorted keys and typed values, which costs more), it does not compare that digest with
 * the record's (written by the library's encoding, so it would not match; a string comparison
 * costs nothing measurable), and it checks no lease, expiry or scope.
 */
import { sha256 } from '../../src/core/hash.js';
import type { StoreExtras } from '../../src/store/index.js';
import type { BenchDb } from '../db/types.js';

/** The scope the bench's guarded servers store their records under. */
const SCOPE = 'bench';

export function leastReplayLookup<Tx>(
  db: BenchDb<Tx>,
): (key: string, request: string) => Promise<string> {
  const store = db.store as BenchDb<Tx>['store'] & StoreExtras;
  return async (key, request) => {
    // The digest's work, not its value, is the point (see above: it is not compared).
    sha256(request);
    const record = await store.read({ scope: SCOPE, key });
    if (record?.state !== 'complete') throw new Error('bench: the replay record is missing');
    return record.result ?? 'null';
  };
}
