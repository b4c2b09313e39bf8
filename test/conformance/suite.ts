/**
 * One conformance suite for every store (STYLE: "one store conformance suite, run against
 * SQLite (file and memory), Postgres (real server) and PGlite"): each rule a store must meet
 * is written once, here and in the files beside it, and the runners in this folder
 * (sqlite.test.ts, postgres*.test.ts, pgbouncer.test.ts) run it on every dialect and driver.
 *
 * - guard-rules.ts: the rules end to end, through the real guard;
 * - store-rules.ts: the store's primitives called straight, as the guard calls them;
 * - concurrency.ts: calls fired at once, through one connection pool or two;
 * - edge-rules.ts: a record replaced after its expiry, a late release, a lease-era original.
 *
 * The dialect folders (test/sqlite, test/postgres) keep what only their dialect has.
 */
import { describe } from 'vitest';
import { describeConcurrencyRules } from './concurrency.js';
import { type ConformanceTarget, useConformance } from './context.js';
import { describeEdgeRules } from './edge-rules.js';
import { describeGuardRules } from './guard-rules.js';
import { describeStoreRules } from './store-rules.js';

export type { ConformanceContext, ConformanceTarget } from './context.js';

export function describeStoreConformance<Tx>(target: ConformanceTarget<Tx>): void {
  describe(`store conformance: ${target.name}`, () => {
    const conformance = useConformance(target);
    describeGuardRules(conformance);
    describeStoreRules(conformance);
    describeConcurrencyRules(conformance);
    describeEdgeRules(conformance);
  });
}
