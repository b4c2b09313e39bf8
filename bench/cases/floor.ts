/**
 * No framework: the one-row insert alone (autocommit and in a transaction of its own), one
 * round trip (`SELECT 1`), the store's own statements around the insert (its `claimAndRun`:
 * the floor of what any guarded call costs), a fresh design's raw statements around it (`floor.design`, the
 * core fresh goal's floor; bench/db/types.ts says which), the guard's `run` with a
 * fresh key and a replay, and the peer doing the same with each of its storages.
 */
import { createGuard, fingerprint } from '../../src/index.js';
import type { BenchDb } from '../db/types.js';
import { freshKey } from '../keys.js';
import type { TimedCase } from '../measure.js';
import { openPeers } from './peer.js';

const RETENTION_MS = 24 * 60 * 60_000;

export async function floorCases<Tx>(
  db: BenchDb<Tx>,
): Promise<{ cases: TimedCase[]; close: () => Promise<void> }> {
  const { store } = db;
  const guard = createGuard({ store });
  const peers = await openPeers(db as BenchDb, freshKey(`peer-${db.id}`));

  const guarded = (key: () => string) => () =>
    guard.run({
      scope: 'bench',
      key: key(),
      // Computed per call, as the adapters do: part of the guard's cost.
      fingerprint: fingerprint({ surface: 'bench', operation: 'pay', input: { amount: 42 } }),
      operation: 'pay',
      work: async (tx) => ({ id: await db.insertTx(tx, 42), amount: 42 }),
    });

  const replayKey = freshKey('core-replay');
  await guarded(() => replayKey)();
  const check = await guarded(() => replayKey)();
  if (!check.replayed) throw new Error('floor: the replay case did not replay');

  const cases: TimedCase[] = [
    { id: 'floor.insert', run: () => db.insert(42) },
    { id: 'floor.insert-tx', run: () => db.insertInTransaction(42) },
    { id: 'floor.round-trip', run: () => db.roundTrip() },
    { id: 'floor.round-trip-drizzle', run: () => db.roundTripDrizzle() },
    {
      id: 'floor.store',
      run: async () => {
        const key = freshKey('floor');
        const request = { scope: 'bench', key, fingerprint: 'f', operation: 'pay' };
        const completion = (id: unknown) => ({
          result: `{"id":${id}}`,
          outcome: 'committed' as const,
          retentionMs: RETENTION_MS,
        });
        const done = await store.claimAndRun(request, async (tx) => {
          const id = await db.insertTx(tx, 42);
          return { value: id, completion: completion(id) };
        });
        if (done.status !== 'done') throw new Error('floor: a fresh key was not claimed');
      },
    },
    { id: 'floor.design', run: () => db.freshDesign(freshKey('design')) },
    { id: 'core.fresh', run: guarded(() => freshKey('core')) },
    { id: 'core.replay', run: guarded(() => replayKey) },
  ];
  const { replayDesign } = db;
  // On the same record as `core.replay`, so that it reads what the guard's replay reads.
  if (replayDesign) cases.push({ id: 'floor.design-replay', run: () => replayDesign(replayKey) });
  for (const peer of peers) {
    const peerReplayKey = freshKey(`peer-${peer.storage}-replay`);
    await peer.pay(peerReplayKey);
    cases.push(
      { id: `peer-${peer.storage}.fresh`, run: () => peer.pay(freshKey('peer')) },
      { id: `peer-${peer.storage}.replay`, run: () => peer.pay(peerReplayKey) },
    );
  }
  return {
    cases,
    close: async () => {
      for (const peer of peers) await peer.close();
    },
  };
}
