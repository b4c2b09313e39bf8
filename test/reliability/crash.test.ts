/**
 * Crashes (SPEC S7, S8, S10, S11): a server process SIGKILLed after the claim,
 * inside the business transaction, and after the commit, on a SQLite file and on Postgres,
 * over tRPC and over GraphQL. The quick set: every point once per store and surface.
 * `npm run soak` runs 100+ random ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability } from '../support/postgres.js';
import type { StoreKind } from './support/backend.js';
import { type CrashSite, closeCrashSite, openCrashSite } from './support/crash-site.js';
import { crashTrial, SURFACES } from './support/crash-trial.js';
import { FAULT_POINTS } from './support/instrument.js';

const pg = await postgresAvailability();
const LEASE_MS = 3000;

const KINDS: StoreKind[] = pg.realPostgres ? ['sqlite', 'postgres'] : ['sqlite'];

// One suite for both stores and surfaces so that all twelve trials run at once: each spends
// most of its time waiting for a lease to run out.
describe(`crashes: SIGKILL at each fault point, on ${KINDS.join(' and ')} ${pg.skipReason ?? ''}`, () => {
  const sites = new Map<StoreKind, CrashSite>();
  beforeAll(async () => {
    await Promise.all(
      KINDS.map(async (kind) => sites.set(kind, await openCrashSite(kind, 'rel_crash'))),
    );
  });
  afterAll(async () => {
    for (const site of sites.values()) await closeCrashSite(site);
  });

  for (const kind of KINDS) {
    for (const surface of SURFACES) {
      for (const point of FAULT_POINTS) {
        it.concurrent(`S8/S10/S11 ${kind} ${surface}: SIGKILL ${point}: early retry ${point === 'after-commit' ? 'replays' : 'gets 409'}, after the lease exactly one payment, identical replays`, async () => {
          const site = sites.get(kind)!;
          const outcome = await crashTrial({
            surface,
            server: { STORE: kind, LOCATION: site.location, TABLE: site.table },
            healthyUrl: site.healthy.url,
            backend: site.backend,
            point,
            leaseMs: LEASE_MS,
          });
          expect(outcome.violations).toEqual([]);
          // Without this the 409 check above proved nothing: the machine was too slow.
          expect(outcome.earlyWithinLease).toBe(true);
          expect(outcome.paymentRows).toBe(1);
        }, 40_000);
      }
    }
  }
});
