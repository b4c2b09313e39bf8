/**
 * The keys whose guarded work runs now in this process, per database client and table (SPEC
 * S10, S11): a duplicate of one of them is answered 409 (or 422) from here, without a
 * statement.
 *
 * Why, beside the database's own hold on the key:
 * - the key's advisory lock is its transaction's, and the server drops it the moment the
 *   connection goes (a terminated backend, a cut link, `idle_in_transaction_session_timeout`),
 *   while the work may still be awaiting something slow in this process. Its writes can no
 *   longer commit, yet S11 keeps the key held until the work is over: here, for every
 *   duplicate this process receives;
 * - PGlite has one connection: while a guarded transaction holds it, a duplicate's statement
 *   would wait for the whole transaction and then replay, where S10 promises 409 at once.
 *   No other process can open the same PGlite, so this is all of its duplicates.
 */
import type { ClaimAndRunResult, ClaimRequest, RecordKey } from '../store/seam.js';
import type { AnyPgDatabase } from './db.js';

/** The fingerprint whose work runs now, by (schema-qualified table, scope, key), per client. */
const held = new WeakMap<object, Map<string, string>>();

type InFlight = Extract<ClaimAndRunResult<never>, { status: 'in_flight' }>;

export interface HeldKeys {
  /** The answer for a key whose work runs now in this process: 409 or 422. */
  running(request: ClaimRequest): InFlight | undefined;
  /** Marks the request's key as held until `work` settles. */
  holding<T>(request: ClaimRequest, work: () => Promise<T>): Promise<T>;
}

export function heldKeys(db: AnyPgDatabase, table: string): HeldKeys {
  // Every Drizzle database over one client (pool, postgres.js instance, PGlite) shares it.
  const client = (db as { $client?: object }).$client ?? db;
  const keys = held.get(client) ?? new Map<string, string>();
  held.set(client, keys);
  const id = ({ scope, key }: RecordKey) => JSON.stringify([table, scope, key]);
  return {
    running(request) {
      if (keys.size === 0) return undefined;
      const fingerprint = keys.get(id(request));
      if (fingerprint === undefined) return undefined;
      // No time to go by, as for a key the database says is held: Retry-After 1.
      return { status: 'in_flight', sameRequest: fingerprint === request.fingerprint };
    },
    async holding(request, work) {
      const name = id(request);
      // A duplicate never gets here while this entry stands: its claim finds it (409).
      keys.set(name, request.fingerprint);
      try {
        return await work();
      } finally {
        keys.delete(name);
      }
    },
  };
}
