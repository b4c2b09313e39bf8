/**
 * The round trips and statements of each call (bench/counts.ts), pinned per store and driver:
 * counted, not timed, so a change that adds a round trip or a statement to a fresh call, a
 * replay or a 409 fails here, and docs/benchmarks.md shows the counts these pin.
 * Each figure: [round trips, statements, round trips before the answer].
 */
import { describe, expect, it } from 'vitest';
import { statementsIn } from '../../bench/count.js';
import { countDriver, type Driver } from '../../bench/counts.js';
import { postgresAvailability, TEST_DATABASE_URL } from '../support/postgres.js';

const pg = await postgresAvailability();

type Figures = [roundTrips: number, statements: number, answeredAfter: number];
const PINNED: Record<Driver, Record<string, Figures>> = {
  // In process: no round trips. Fresh: the read that answers replays without queuing, BEGIN
  // IMMEDIATE, the read under the lock, the work's savepoint, the insert, its release, the
  // record, COMMIT.
  'better-sqlite3': {
    unguarded: [0, 3, 0],
    fresh: [0, 8, 0],
    replay: [0, 1, 0],
    inFlight: [0, 0, 0],
  },
  // BEGIN with the claim and the savepoint; the insert; the record with COMMIT. A replay is
  // answered after its first round trip; the empty transaction's ROLLBACK goes after.
  'node-postgres': {
    unguarded: [3, 3, 3],
    fresh: [3, 6, 3],
    replay: [2, 4, 1],
    inFlight: [0, 0, 0],
    inFlightElsewhere: [2, 4, 1],
  },
  // Drizzle's BEGIN; the level, the claim and the savepoint in one query; the insert; the
  // record; Drizzle's COMMIT.
  'postgres.js': {
    unguarded: [3, 3, 3],
    fresh: [5, 7, 5],
    replay: [3, 5, 3],
    inFlight: [0, 0, 0],
    inFlightElsewhere: [3, 5, 3],
  },
  // One request per statement: BEGIN, the level, the claim, the savepoint, the insert, the
  // record, COMMIT.
  PGlite: {
    unguarded: [3, 3, 3],
    fresh: [7, 7, 7],
    replay: [5, 5, 5],
    inFlight: [0, 0, 0],
  },
};

async function figures(driver: Driver): Promise<Record<string, Figures>> {
  const { store: _store, driver: _driver, ...calls } = await countDriver(driver, TEST_DATABASE_URL);
  return Object.fromEntries(
    Object.entries(calls).map(([call, count]) => [
      call,
      [count.roundTrips, count.statements, count.answeredAfter],
    ]),
  );
}

describe('round trips and statements per call', () => {
  it('better-sqlite3', async () => {
    expect(await figures('better-sqlite3')).toEqual(PINNED['better-sqlite3']);
  });

  it('PGlite', { timeout: 120_000 }, async () => {
    expect(await figures('PGlite')).toEqual(PINNED.PGlite);
  });

  describe.skipIf(!pg.realPostgres)(`on the real server ${pg.skipReason ?? ''}`, () => {
    it('node-postgres', async () => {
      expect(await figures('node-postgres')).toEqual(PINNED['node-postgres']);
    });

    it('postgres.js', async () => {
      expect(await figures('postgres.js')).toEqual(PINNED['postgres.js']);
    });
  });
});

describe('statementsIn', () => {
  it.each([
    ['select 1', 1],
    ['begin; select 1; savepoint a', 3],
    ['select 1;', 1],
    ['  ;select 1;;  ', 1],
    ["select 'a;b'; select 'it''s;'", 2],
    ["select E'\\\\'';x'; select 1", 2],
    ['select "a;b" from t', 1],
    ['select $$;$$; select $tag$ ; $tag$', 2],
    ['select 1 -- a; b\n; select 2 /* ; */', 2],
    ['-- only a comment;', 0],
  ])('%j has %i', (text, count) => {
    expect(statementsIn(text)).toBe(count);
  });
});
