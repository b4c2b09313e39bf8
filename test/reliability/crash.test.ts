/**
 * Crashes (SPEC S7, S8, S10, S11, S24): a server process SIGKILLed after the claim, inside
 * the business transaction, and after the commit, on a SQLite file and on Postgres, over
 * tRPC and over GraphQL. The quick set: every point once per store and surface, and on
 * postgres.js every point once more over tRPC (the surface changes nothing below the store;
 * the driver does). `npm run soak` runs 100+ random ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability } from '../support/postgres.js';
import type { PostgresDriver, StoreKind } from './support/backend.js';
import {
  type CrashSite,
  closeCrashSite,
  openCrashSite,
  serverEnvOf,
} from './support/crash-site.js';
import { crashTrial, SURFACES, type Surface } from './support/crash-trial.js';
import { FAULT_POINTS } from './support/instrument.js';

const pg = await postgresAvailability();
const LEASE_MS = 3000;

interface Target {
  name: string;
  kind: StoreKind;
  driver?: PostgresDriver;
  surfaces: readonly Surface[];
}
const TARGETS: Target[] = [
  { name: 'sqlite', kind: 'sqlite', surfaces: SURFACES },
  ...(pg.realPostgres
    ? ([
        { name: 'postgres', kind: 'postgres', driver: 'node-postgres', surfaces: SURFACES },
        {
          name: 'postgres (postgres.js)',
          kind: 'postgres',
          driver: 'postgres.js',
          surfaces: ['trpc'],
        },
      ] satisfies Target[])
    : []),
];

// One suite for every store, driver and surface so that all trials run at once: each spends
// most of its time waiting for a lease to run out.
describe(`crashes: SIGKILL at each fault point, on ${TARGETS.map((t) => t.name).join(', ')} ${pg.skipReason ?? ''}`, () => {
  const sites = new Map<string, CrashSite>();
  beforeAll(async () => {
    await Promise.all(
      TARGETS.map(async (target) =>
        sites.set(target.name, await openCrashSite(target.kind, 'rel_crash', target.driver)),
      ),
    );
  });
  afterAll(async () => {
    for (const site of sites.values()) await closeCrashSite(site);
  });

  for (const target of TARGETS) {
    for (const surface of target.surfaces) {
      for (const point of FAULT_POINTS) {
        it.concurrent(`S8/S10/S11 ${target.name} ${surface}: SIGKILL ${point}: early retry ${point === 'after-commit' ? 'replays' : 'gets 409'}, after the lease exactly one payment, identical replays`, async () => {
          const site = sites.get(target.name)!;
          const outcome = await crashTrial({
            surface,
            server: serverEnvOf(site),
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
