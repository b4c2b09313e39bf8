/**
 * GraphQL through `yoga.fetch` and tRPC through `fetchRequestHandler`, in process, so that
 * the numbers are the framework plus the guard plus the database, with no socket between.
 * Per surface and database: the mutation unguarded (autocommit, and in a transaction of its
 * own), guarded with a fresh key, a replay, and a query on the server with and without the
 * plugin (pass-through, SPEC S17).
 *
 * And the replay's floor: the replay answered by the least adapter (`replay-floor-adapter`,
 * bench/apps/least-replay.ts), a middleware or plugin that reads the key header, hashes the
 * request, reads the record the replay reads (the store's `read`, one primary-key SELECT)
 * and returns its stored result, marked as a replay, instead of running the resolver. No
 * guarded replay through an adapter can beat it. Beside it, for comparison, the same mutation
 * on a server without the plugin whose resolver only reads that record (`replay-floor`): not
 * a bound, since a replay need not run the framework's execution of the mutation at all.
 *
 * And, where the database has `insertWithRecord` (both do), the fresh call's floors: the same
 * mutation on a server without the plugin whose resolver writes its row and a complete record
 * in one transaction with a fresh design's raw statements (bench/db/types.ts says which), on
 * the plain server (`fresh-floor`) and behind the least adapter, a middleware or plugin that
 * only does what any guarding one must (`fresh-floor-adapter`, bench/apps): read the key
 * header and hash the request once, as the least replay does (nothing can know a call is
 * fresh before it has looked up its key, and the record stores the request's digest), wrap
 * the mutation, hand its resolver a transaction handle, and run it where the store runs
 * guarded work (on SQLite in an AsyncLocalStorage frame, SPEC S23). Its calls carry a fresh
 * key. No guarded call through an adapter can beat the second.
 */

import type { StoreExtras } from '../../src/store/index.js';
import { TRPC_PAY_BODY, trpcApps } from '../apps/trpc.js';
import { PAY_BODY, PING_BODY, yogaApps } from '../apps/yoga.js';
import type { BenchDb } from '../db/types.js';
import { freshKey } from '../keys.js';
import type { TimedCase } from '../measure.js';

type Handler = (request: Request) => Promise<Response> | Response;

export interface Surface {
  id: 'graphql' | 'trpc';
  label: string;
  plain: Handler;
  /** The plain server whose mutation writes in a transaction of its own. */
  plainTx: Handler;
  guarded: Handler;
  /** The plain server whose mutation only reads one record (for comparison with a replay). */
  readOnly: (replayKey: string) => Handler;
  /** The least adapter's replay, answered from the record of the key the request carries. */
  leastReplay: Handler;
  /**
   * The plain server whose mutation writes its row and a complete record in one transaction
   * (the fresh floor), where the database has `insertWithRecord`.
   */
  recording: Handler | undefined;
  /** The same behind the least adapter (the adapter's fresh floor), where there is `recording`. */
  recordingAdapter: Handler | undefined;
  mutation: (key?: string) => Request;
  query: () => Request;
}

/**
 * The database with a business write that only reads the replay's record, as the store reads
 * it: the plain servers built on it answer the mutation at a replay's floor.
 */
function readingDb<Tx>(db: BenchDb<Tx>, replayKey: string): BenchDb<Tx> {
  const store = db.store as BenchDb<Tx>['store'] & StoreExtras;
  return {
    ...db,
    insert: async () => {
      const record = await store.read({ scope: 'bench', key: replayKey });
      if (!record) throw new Error('bench: the replay record is missing');
      return 0;
    },
  };
}

/**
 * The database whose business write also stores a complete record under a fresh key with a
 * design's raw statements (`insertWithRecord`): the plain servers built on it answer the
 * mutation at a fresh call's floor. `undefined` where the database has no such write.
 */
function recordingDb<Tx>(db: BenchDb<Tx>): BenchDb<Tx> | undefined {
  const { insertWithRecord } = db;
  if (!insertWithRecord) return undefined;
  return { ...db, insert: (amount) => insertWithRecord(amount, freshKey('fresh-floor')) };
}

export function graphqlSurface<Tx>(db: BenchDb<Tx>): Surface {
  const { plain, plainTx, guarded, leastReplay } = yogaApps(db);
  // The fresh floors' servers, on the recording database, built once for both.
  const recordingApps = withDb(recordingDb(db), (recorded) => yogaApps(recorded));
  const post = (body: string, key?: string) =>
    new Request('http://bench/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body,
    });
  return {
    id: 'graphql',
    label: 'GraphQL (Yoga)',
    plain: (request) => plain.fetch(request),
    plainTx: (request) => plainTx.fetch(request),
    guarded: (request) => guarded.fetch(request),
    readOnly: (replayKey) => {
      const { plain: reading } = yogaApps(readingDb(db, replayKey));
      return (request) => reading.fetch(request);
    },
    leastReplay: (request) => leastReplay.fetch(request),
    recording: recordingApps && ((request) => recordingApps.plain.fetch(request)),
    recordingAdapter: recordingApps && ((request) => recordingApps.leastAdapter.fetch(request)),
    mutation: (key) => post(PAY_BODY, key),
    query: () => post(PING_BODY),
  };
}

export function trpcSurface<Tx>(db: BenchDb<Tx>): Surface {
  const { plain, plainTx, guarded, leastReplay } = trpcApps(db);
  // The fresh floors' servers, on the recording database, built once for both.
  const recordingApps = withDb(recordingDb(db), trpcApps);
  return {
    id: 'trpc',
    label: 'tRPC (fetch)',
    plain,
    plainTx,
    guarded,
    readOnly: (replayKey) => trpcApps(readingDb(db, replayKey)).plain,
    leastReplay,
    recording: recordingApps?.plain,
    recordingAdapter: recordingApps?.leastAdapter,
    mutation: (key) =>
      new Request('http://bench/trpc/pay', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: TRPC_PAY_BODY,
      }),
    query: () => new Request('http://bench/trpc/ping', { method: 'GET' }),
  };
}

function withDb<Tx, R>(db: BenchDb<Tx> | undefined, build: (db: BenchDb<Tx>) => R) {
  return db && build(db);
}

/** The cases of one surface on one database; ids are `<surface>.<case>`. */
export async function surfaceCases(surface: Surface): Promise<TimedCase[]> {
  const replayKey = freshKey(`${surface.id}-replay`);
  // The record every replay reads, created once and checked to be a fresh run.
  await expectAnswer(surface.guarded, surface.mutation(replayKey), 'false');
  await expectAnswer(surface.guarded, surface.mutation(replayKey), 'true');
  await expectAnswer(surface.plain, surface.mutation(), null);
  await expectAnswer(surface.plainTx, surface.mutation(), null);
  const readOnly = surface.readOnly(replayKey);
  await expectAnswer(readOnly, surface.mutation(), null);
  await expectAnswer(surface.leastReplay, surface.mutation(replayKey), 'true');
  const { recording, recordingAdapter } = surface;
  // The least adapter reads the key header, as any guarding one must: each call a fresh key.
  const adapterFresh = () => surface.mutation(freshKey('fresh-floor-adapter'));
  if (recording) await expectAnswer(recording, surface.mutation(), null);
  if (recordingAdapter) await expectAnswer(recordingAdapter, adapterFresh(), null);

  const call = (handler: Handler, request: () => Request) => async () => {
    const response = await handler(request());
    // Reading the body is part of the work: the response is not done until it is sent.
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${surface.id}: ${response.status} ${text}`);
  };
  const id = (name: string) => `${surface.id}.${name}`;
  return [
    { id: id('unguarded'), run: call(surface.plain, () => surface.mutation()) },
    { id: id('unguarded-tx'), run: call(surface.plainTx, () => surface.mutation()) },
    {
      id: id('fresh'),
      run: call(surface.guarded, () => surface.mutation(freshKey(surface.id))),
    },
    { id: id('replay'), run: call(surface.guarded, () => surface.mutation(replayKey)) },
    { id: id('replay-floor'), run: call(readOnly, () => surface.mutation()) },
    {
      id: id('replay-floor-adapter'),
      run: call(surface.leastReplay, () => surface.mutation(replayKey)),
    },
    ...(recording
      ? [{ id: id('fresh-floor'), run: call(recording, () => surface.mutation()) }]
      : []),
    ...(recordingAdapter
      ? [{ id: id('fresh-floor-adapter'), run: call(recordingAdapter, adapterFresh) }]
      : []),
    { id: id('query-plain'), run: call(surface.plain, surface.query) },
    { id: id('query-plugin'), run: call(surface.guarded, surface.query) },
  ];
}

/** Fails the run if a case does not do what its name says (a bench of a 400 is no bench). */
async function expectAnswer(handler: Handler, request: Request, replayed: string | null) {
  const response = await handler(request);
  const text = await response.text();
  const header = response.headers.get('idempotent-replayed');
  // GraphQL answers a resolver's error with 200 and an `errors` entry.
  const failed = response.status !== 200 || text.includes('"errors"');
  if (failed || (header ?? 'false') !== (replayed ?? 'false')) {
    throw new Error(
      `bench sanity check failed: status ${response.status}, Idempotent-Replayed ${header}, body ${text}`,
    );
  }
}
