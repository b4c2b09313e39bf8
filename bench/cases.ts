/**
 * The timed cases of one database, ids `<surface>.<case>`:
 * - `core`: `guard.run` with no framework, fresh key and replay, beside the business insert
 *   unguarded (autocommit, and in a Drizzle transaction of its own);
 * - `graphql`, `trpc`: the mutation through the framework, unguarded (both ways), guarded with
 *   a fresh key and a replay; and a query on the server with and without the library
 *   (pass-through, SPEC S17);
 * - `peer-memory`, `peer-redis`: @node-idempotency/core guarding the same insert (peer.ts).
 * Each case is checked once before it is timed: a bench of a 400 is no bench.
 */
import { createGuard } from '../src/index.js';
import { graphqlSurface, type Handler, type Surface, trpcSurface } from './apps.js';
import type { BenchDb } from './db.js';
import { freshKey } from './keys.js';
import type { TimedCase } from './measure.js';
import { openPeers } from './peer.js';

export async function timedCases<Tx>(db: BenchDb<Tx>) {
  const cases: TimedCase[] = [...(await coreCases(db))];
  for (const surface of [graphqlSurface(db), trpcSurface(db)]) {
    cases.push(...(await surfaceCases(surface)));
  }
  const peers = await openPeers(db as BenchDb, freshKey(`peer-${db.id}`));
  for (const peer of peers) {
    const replayKey = freshKey(`peer-${peer.storage}-replay`);
    await peer.pay(replayKey);
    cases.push(
      { id: `peer-${peer.storage}.fresh`, run: () => peer.pay(freshKey('peer')) },
      { id: `peer-${peer.storage}.replay`, run: () => peer.pay(replayKey) },
    );
  }
  return { cases, close: () => Promise.all(peers.map((peer) => peer.close())) };
}

async function coreCases<Tx>(db: BenchDb<Tx>): Promise<TimedCase[]> {
  const guard = createGuard({ store: db.store });
  const run = (key: string) =>
    guard.run({
      scope: 'bench',
      key,
      fingerprint: 'pay 42',
      operation: 'pay',
      work: async (tx) => ({ id: await db.insertTx(tx, 42), amount: 42 }),
    });
  const replayKey = freshKey('core-replay');
  await run(replayKey);
  if (!(await run(replayKey)).replayed) throw new Error('bench: the core replay ran afresh');
  return [
    { id: 'core.unguarded', run: () => db.insert(42) },
    { id: 'core.unguarded-tx', run: () => db.insertInTransaction(42) },
    { id: 'core.fresh', run: () => run(freshKey('core')) },
    { id: 'core.replay', run: () => run(replayKey) },
  ];
}

async function surfaceCases(surface: Surface): Promise<TimedCase[]> {
  const replayKey = freshKey(`${surface.id}-replay`);
  await expectAnswer(surface.guarded, surface.mutation(replayKey), 'false');
  await expectAnswer(surface.guarded, surface.mutation(replayKey), 'true');
  await expectAnswer(surface.plain, surface.mutation(), 'false');
  await expectAnswer(surface.plainTx, surface.mutation(), 'false');
  // Reading the body is part of the work: the response is not done until it is sent.
  const call = (handler: Handler, request: () => Request) => async () => {
    const response = await handler(request());
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${surface.id}: ${response.status} ${text}`);
  };
  const id = (name: string) => `${surface.id}.${name}`;
  return [
    { id: id('unguarded'), run: call(surface.plain, () => surface.mutation()) },
    { id: id('unguarded-tx'), run: call(surface.plainTx, () => surface.mutation()) },
    { id: id('fresh'), run: call(surface.guarded, () => surface.mutation(freshKey(surface.id))) },
    { id: id('replay'), run: call(surface.guarded, () => surface.mutation(replayKey)) },
    { id: id('query-plain'), run: call(surface.plain, surface.query) },
    { id: id('query-plugin'), run: call(surface.guarded, surface.query) },
  ];
}

async function expectAnswer(handler: Handler, request: Request, replayed: 'true' | 'false') {
  const response = await handler(request);
  const text = await response.text();
  const header = response.headers.get('idempotent-replayed') ?? 'false';
  // GraphQL answers a resolver's error with 200 and an `errors` entry.
  if (response.status !== 200 || text.includes('"errors"') || header !== replayed) {
    throw new Error(`bench check failed: ${response.status}, replayed ${header}, ${text}`);
  }
}
