/**
 * Crashes (SPEC S7, S8, S10, S11, S24): a server process SIGKILLed after the claim, inside
 * the business transaction, and after the commit, on a SQLite file (the transaction holds
 * the key: the key is free as the process exits) and on Postgres (the transaction holds it:
 * the key is free once the server sees the connection close), over
 * tRPC and over GraphQL. The quick set: every point once per store, driver and surface, on
 * node-postgres and postgres.js, each also on sessions defaulting to SERIALIZABLE. (The two
 * surfaces reach the store differently: a GraphQL resolver writes through the plugin's
 * context, a tRPC procedure through the middleware's.) PGlite is not here: its database
 * lives in one process, so no healthy process could take the retry of a killed one. `npm run
 * soak` runs 100+ random ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailability } from '../support/postgres.js';
import { SERVER_TARGETS, type ServerTarget, type StoreKind } from './support/backend.js';
import {
  type CrashSite,
  closeCrashSite,
  openCrashSite,
  serverEnvOf,
} from './support/crash-site.js';
import { crashTrial, SURFACES } from './support/crash-trial.js';
import { FAULT_POINTS } from './support/instrument.js';

const pg = await postgresAvailability();
/** When the late retry goes: the server has seen the killed connection close by then. */
const SETTLE_MS = 3000;

interface Target {
  name: string;
  kind: StoreKind;
  postgres?: ServerTarget;
}
const TARGETS: Target[] = [
  { name: 'sqlite', kind: 'sqlite' },
  ...(pg.realPostgres
    ? SERVER_TARGETS.map(
        (postgres, i): Target => ({
          name: i === 0 ? 'postgres' : `postgres (${postgres.name})`,
          kind: 'postgres',
          postgres,
        }),
      )
    : []),
];

// One suite for every store, driver and surface so that all trials run at once: each spends
// most of its time waiting for its late retry.
describe(`crashes: SIGKILL at each fault point, on ${TARGETS.map((t) => t.name).join(', ')} ${pg.skipReason ?? ''}`, () => {
  const sites = new Map<string, CrashSite>();
  beforeAll(async () => {
    await Promise.all(
      TARGETS.map(async (target) =>
        sites.set(target.name, await openCrashSite(target.kind, 'rel_crash', target.postgres)),
      ),
    );
  });
  afterAll(async () => {
    for (const site of sites.values()) await closeCrashSite(site);
  });

  for (const target of TARGETS) {
    for (const surface of SURFACES) {
      for (const point of FAULT_POINTS) {
        const early =
          point === 'after-commit'
            ? 'replays'
            : target.kind === 'postgres'
              ? 'runs (the key went with the connection) or gets 409'
              : 'runs (the key went with the process)';
        it.concurrent(`S8/S10/S11 ${target.name} ${surface}: SIGKILL ${point}: early retry ${early}, then exactly one payment, identical replays`, async () => {
          const site = sites.get(target.name)!;
          const outcome = await crashTrial({
            surface,
            server: serverEnvOf(site),
            healthyUrl: site.healthy.url,
            backend: site.backend,
            point,
            settleMs: SETTLE_MS,
          });
          expect(outcome.violations).toEqual([]);
          expect(outcome.paymentRows).toBe(1);
        }, 40_000);
      }
    }
  }
});
