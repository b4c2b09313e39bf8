/**
 * Crash soak: 120 crash trials, each a fresh process SIGKILLed at a random fault
 * point, taking turns between an SQLite file and Postgres through each driver (each also on
 * sessions defaulting to SERIALIZABLE, S24), over tRPC or GraphQL picked at random, four
 * trials at a time. Bounded: no new trial starts after 4 minutes, and at least 100 must
 * have run. PGlite is not here: its database lives in one process, so no healthy process
 * could take the retry of a killed one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../bench/random.js';
import { postgresAvailability } from '../../support/postgres.js';
import { SERVER_TARGETS, type ServerTarget, type StoreKind } from '../support/backend.js';
import {
  type CrashSite,
  closeCrashSite,
  openCrashSite,
  serverEnvOf,
} from '../support/crash-site.js';
import { type CrashOutcome, crashTrial, SURFACES } from '../support/crash-trial.js';
import { FAULT_POINTS } from '../support/instrument.js';
import { record, soakSeed } from './figures.js';

const pg = await postgresAvailability();
/** Where the trials take turns: SQLite, and Postgres through each server target. */
const SITES: { name: string; kind: StoreKind; postgres?: ServerTarget }[] = [
  { name: 'sqlite', kind: 'sqlite' },
  ...(pg.realPostgres
    ? SERVER_TARGETS.map((postgres) => ({
        name: `postgres (${postgres.name})`,
        kind: 'postgres' as const,
        postgres,
      }))
    : []),
];
const TRIALS = 120;
const PARALLEL = 4;
const SETTLE_MS = 2500;
const DEADLINE_MS = 240_000;

describe('soak: crash trials at random fault points', () => {
  const sites = new Map<string, CrashSite>();
  beforeAll(async () => {
    for (const { name, kind, postgres } of SITES) {
      sites.set(name, await openCrashSite(kind, 'soak_crash', postgres));
    }
  });
  afterAll(async () => {
    for (const site of sites.values()) await closeCrashSite(site);
  });

  it(`S7-S11/S24: ${TRIALS} SIGKILLs at random points: the key freed with the process (a fresh run, or 409 while Postgres has not yet seen the connection close), one payment per key, identical replays`, async () => {
    const random = mulberry32(soakSeed('crash'));
    const plan = Array.from({ length: TRIALS }, (_, i) => ({
      site: SITES[i % SITES.length]!.name,
      point: FAULT_POINTS[Math.floor(random() * FAULT_POINTS.length)]!,
      surface: SURFACES[Math.floor(random() * SURFACES.length)]!,
    }));
    const outcomes: (CrashOutcome & { site: string })[] = [];
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let i = next++; i < plan.length && Date.now() - started < DEADLINE_MS; i = next++) {
          const { site: name, point, surface } = plan[i]!;
          const site = sites.get(name)!;
          const outcome = await crashTrial({
            surface,
            server: serverEnvOf(site),
            healthyUrl: site.healthy.url,
            backend: site.backend,
            point,
            settleMs: SETTLE_MS,
          });
          outcomes.push({ ...outcome, site: name });
        }
      }),
    );

    const count = (filter: (o: (typeof outcomes)[number]) => boolean) =>
      outcomes.filter(filter).length;
    const figures: Record<string, number> = {
      trials: outcomes.length,
      durationS: Math.round((Date.now() - started) / 1000),
    };
    for (const { name } of SITES) {
      for (const point of FAULT_POINTS) {
        figures[`${name}/${point}`] = count((o) => o.site === name && o.point === point);
      }
    }
    for (const surface of SURFACES) figures[surface] = count((o) => o.surface === surface);
    Object.assign(figures, {
      earlyFresh: count((o) => o.early.status === 200 && !o.early.replayed),
      early409: count((o) => o.early.status === 409),
      earlyReplays: count((o) => o.early.status === 200 && o.early.replayed),
      freshLate: count((o) => o.late.status === 200 && !o.late.replayed),
      doubleExecutions: outcomes.reduce((sum, o) => sum + Math.max(0, o.paymentRows - 1), 0),
      lostResults: count((o) => o.paymentRows === 0),
      violations: outcomes.reduce((sum, o) => sum + o.violations.length, 0),
    });
    record({ scenario: 'crash trials (SIGKILL at random points)', figures });

    expect(outcomes.flatMap((o) => o.violations)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(100);
    expect(figures.doubleExecutions).toBe(0);
    expect(figures.lostResults).toBe(0);
  }, 300_000);
});
