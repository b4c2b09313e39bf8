/**
 * The least adapters (bench/apps), whose cost bounds the adapters' goals: each must do at least
 * what any guarding middleware or plugin must before it can know whether a call is fresh or a
 * replay, which is to read the key header and hash the request. A floor that skipped either
 * would sit below what a guard could reach, and docs/benchmarks.md would call goals reachable
 * that are not. On the SQLite bench database, as `npm run bench` builds it.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { graphqlSurface, type Surface, trpcSurface } from '../../bench/cases/surfaces.js';
import { openSqliteBench } from '../../bench/db/sqlite.js';
import { freshKey } from '../../bench/keys.js';

/** Every SHA-256 the bench's apps take, counted. */
const hashes = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/core/hash.js', async (original) => {
  const actual = await original<typeof import('../../src/core/hash.js')>();
  return {
    ...actual,
    sha256: (text: string) => {
      hashes.count++;
      return actual.sha256(text);
    },
  };
});

const db = openSqliteBench();
afterAll(() => db.close());

const surfaces: Surface[] = [graphqlSurface(db), trpcSurface(db)];

/** The answer's status and whether it carries an error, GraphQL's (200 with `errors`) included. */
async function answer(response: Response): Promise<{ status: number; failed: boolean }> {
  const text = await response.text();
  return { status: response.status, failed: response.status !== 200 || text.includes('"errors"') };
}

describe.each(surfaces)('$label: the least adapter', (surface) => {
  beforeEach(() => {
    hashes.count = 0;
  });

  it('answers a fresh call with a key, after hashing the request once', async () => {
    const adapter = surface.recordingAdapter!;
    const response = await adapter(surface.mutation(freshKey('least-fresh')));
    expect(await answer(response)).toEqual({ status: 200, failed: false });
    expect(hashes.count).toBe(1);
  });

  it('reads the key header on a fresh call: without one it answers nothing', async () => {
    const adapter = surface.recordingAdapter!;
    const response = await adapter(surface.mutation());
    expect((await answer(response)).failed).toBe(true);
  });

  it('reads the key header on a replay too', async () => {
    const response = await surface.leastReplay(surface.mutation());
    expect((await answer(response)).failed).toBe(true);
  });
});
