/**
 * Where a guarded call's time goes, on SQLite (not a goal check: `npm run bench` is). SQLite
 * runs in this process, so the main thread's CPU time per call is the whole cost, and it moves
 * far less than wall time on a shared machine. Besides the bench's cases it times each
 * surface's unguarded mutation with a resolver that writes nothing (`unguarded-noop`): a
 * replay minus that is what the guard and the adapter add to a replay. And the unguarded
 * mutation run inside an AsyncLocalStorage context (`unguarded-in-context`): the SQLite store
 * runs guarded work in one (src/sqlite/lock.ts, so that a guarded call nested in it joins its
 * transaction, SPEC S23), and on Node 20 and 22 that makes every promise of the framework's
 * own request handling slower; the difference is that part of a fresh call's cost.
 *
 * And each surface's guarded mutation over a store that keeps nothing (`guarded-no-store`):
 * its `claimAndRun` only runs the work, whose insert commits on its own, with no transaction,
 * no statement and no record of the store's. Against `unguarded`, that is what the adapter
 * and the guard cost before any store does anything; `guarded-no-store-in-context` runs the
 * work in an AsyncLocalStorage context as the SQLite store does, and `fresh` minus that is
 * the SQLite store's own cost, its statements included.
 *
 *   npx tsx bench/profile.ts [filter] [rounds]   # filter: part of a case id, or `id$` for one case
 *   BENCH_PROFILE=out.cpuprofile npx tsx bench/profile.ts graphql.replay
 *                                      # the same, with a CPU profile of the timed calls
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { floorCases } from './cases/floor.js';
import { graphqlSurface, surfaceCases, trpcSurface } from './cases/surfaces.js';
import { openSqliteBench } from './db/sqlite.js';
import { freshKey } from './keys.js';
import type { TimedCase } from './measure.js';

const filter = process.argv[2] ?? '';
const rounds = Number(process.argv[3] ?? 15);
/** Calls per case per round. */
const CALLS = 200;

const db = openSqliteBench();
const floor = await floorCases(db);
const noop = { ...db, insert: async () => 0 };
/**
 * The same database behind a store that keeps nothing: its `claimAndRun` runs the work (with
 * no transaction handle: the insert commits on its own) and reports it done, optionally in
 * the bench's work context (`db.workContext`), as the SQLite store runs its work.
 */
function withoutStore(inContext: boolean): typeof db {
  const claimAndRun = async <T>(
    _request: unknown,
    work: (tx: never, claim: { takenOver: boolean }) => Promise<{ value: T }>,
  ) => {
    const run = () => work(undefined as never, { takenOver: false });
    const { value } = await (inContext ? db.workContext(run) : run());
    return { status: 'done' as const, value };
  };
  return {
    ...db,
    store: { ...db.store, claimAndRun },
    insertTx: (_tx, amount) => db.insert(amount),
  };
}
/** Each surface's apps once: the bench's cases and the in-context one time the same server. */
const graphql = graphqlSurface(db);
const trpc = trpcSurface(db);
const cases: TimedCase[] = [
  ...floor.cases.filter((item) => !item.id.startsWith('peer')),
  ...(await surfaceCases(graphql)),
  ...(await surfaceCases(trpc)),
  ...[graphqlSurface(noop), trpcSurface(noop)].map((surface) => ({
    id: `${surface.id}.unguarded-noop`,
    run: async () => {
      const response = await surface.plain(surface.mutation());
      await response.text();
    },
  })),
  ...[false, true].flatMap((inContext) =>
    [graphqlSurface(withoutStore(inContext)), trpcSurface(withoutStore(inContext))].map(
      (surface) => ({
        id: `${surface.id}.guarded-no-store${inContext ? '-in-context' : ''}`,
        run: async () => {
          const response = await surface.guarded(surface.mutation(freshKey('no-store')));
          const text = await response.text();
          if (response.status !== 200) throw new Error(`${surface.id}: ${text}`);
        },
      }),
    ),
  ),
  ...[graphql, trpc].map((surface) => ({
    id: `${surface.id}.unguarded-in-context`,
    run: () =>
      db.workContext(async () => {
        const response = await surface.plain(surface.mutation());
        await response.text();
      }),
  })),
].filter((item) =>
  filter.endsWith('$') ? item.id === filter.slice(0, -1) : item.id.includes(filter),
);

/** The process's CPU time in µs (its GC threads included: garbage is part of the cost). */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

try {
  for (const item of cases) for (let i = 0; i < 50; i++) await item.run();
  const session = process.env.BENCH_PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const perCall = new Map<string, number[]>(cases.map((item) => [item.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (const item of cases) {
      const before = cpuMicros();
      for (let i = 0; i < CALLS; i++) await item.run();
      perCall.get(item.id)!.push((cpuMicros() - before) / CALLS);
    }
  }
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  // The lower quartile: noise from the shared machine only ever adds.
  console.log(`${'case'.padEnd(38)} CPU µs per call (lower quartile, median of ${rounds} rounds)`);
  for (const [id, values] of perCall) {
    values.sort((a, b) => a - b);
    const at = (q: number) => values[Math.floor(q * (values.length - 1))]!;
    console.log(
      `${id.padEnd(38)} ${at(0.25).toFixed(1).padStart(8)} ${at(0.5).toFixed(1).padStart(8)}`,
    );
  }
} finally {
  await floor.close();
  await db.close();
}
