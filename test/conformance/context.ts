/**
 * What the conformance rule files share: the target a runner describes, the context of the
 * running test (a fresh table per test), and the helpers the rules use.
 */
import { afterEach, beforeEach } from 'vitest';
import {
  createGuard,
  type Guard,
  type GuardCall,
  type GuardEvent,
  type GuardOptions,
  IdempotencyError,
  type IdempotencyStore,
  type StoreExtras,
} from '../../src/index.js';
import { deferred } from '../support/deferred.js';

export interface ConformanceContext<Tx> {
  /** A migrated store on a table of its own. */
  store: IdempotencyStore<Tx> & StoreExtras;
  /** Writes one business row through the guarded transaction. */
  insertPayment(tx: Tx, id: string): Promise<void>;
  /** Business rows committed so far (read outside any guarded transaction). */
  countPayments(): Promise<number>;
  /** A store on the same table through a separate connection pool, where the dialect has one. */
  secondStore?: () => Promise<IdempotencyStore<Tx>>;
  close(): Promise<void>;
}

export interface ConformanceTarget<Tx> {
  name: string;
  setup(options?: SetupOptions): Promise<ConformanceContext<Tx>>;
  /** A store whose database cannot be reached (S15). */
  unreachable(): Promise<{ store: IdempotencyStore<Tx>; close(): Promise<void> }>;
  /** Why multi-connection tests are skipped, when they are (never under CI). */
  skipMultiConnection?: string;
}

export interface SetupOptions {
  /**
   * The most connections the store's database opens at once (a pool's `max`), for rules that
   * need every connection taken. Single-connection stores ignore it. Unset: the runner's own.
   */
  connections?: number;
}

/** A retention short enough to wait out in a test, and a wait past it. */
export const SHORT_RETENTION = 150;
export const PAST_RETENTION = 400;

/**
 * What every rule file gets: the running test's context (a fresh table per test), the
 * guard's events, and the helpers the rules share.
 */
export interface Conformance<Tx> extends Omit<ConformanceContext<Tx>, 'close'> {
  target: ConformanceTarget<Tx>;
  /** The events of the guards made with `guardFor` in the running test. */
  events: GuardEvent[];
  /** A guard on the running test's store that records its events. */
  guardFor(overrides?: Partial<GuardOptions<Tx>>): Guard<Tx>;
  /** A guarded call of createPayment, by acct_1 with fingerprint fp-a unless told otherwise. */
  call<T>(key: string, work: (tx: Tx) => Promise<T>, fields?: CallFields): GuardCall<Tx, T>;
  /**
   * Holds `key` (acct_1/k1, fingerprint fp-a, unless told otherwise) as another request would:
   * its guarded work runs and waits until `finish()`, which resolves to that call's result.
   * A hold the test leaves open is finished before the context closes.
   */
  holdAsAnotherRequest(fields?: HoldFields): Promise<Hold>;
}

interface HoldFields {
  scope?: string;
  key?: string;
  /** What the held call answers once finished. */
  value?: unknown;
}

export interface Hold {
  /** Lets the held work end; resolves to what its call answered. */
  finish(): Promise<unknown>;
}

interface CallFields {
  fingerprint?: string;
  scope?: string;
  retention?: number;
}

/** Sets up a fresh context before each test of the enclosing describe and closes it after. */
export function useConformance<Tx>(
  target: ConformanceTarget<Tx>,
  options?: SetupOptions,
): Conformance<Tx> {
  let current: ConformanceContext<Tx> | undefined;
  let events: GuardEvent[] = [];
  /** Holds still open: finished before the context closes, so that teardown cannot hang. */
  const holds = new Set<Hold>();
  beforeEach(async () => {
    current = await target.setup(options);
    events = [];
  });
  afterEach(async () => {
    for (const hold of holds) await hold.finish().catch(() => {});
    holds.clear();
    await current?.close();
    current = undefined;
  });
  const live = () => {
    if (!current) throw new Error('the conformance context exists only while a test runs');
    return current;
  };
  return {
    target,
    get store() {
      return live().store;
    },
    get secondStore() {
      return live().secondStore;
    },
    get events() {
      return events;
    },
    insertPayment: (tx, id) => live().insertPayment(tx, id),
    countPayments: () => live().countPayments(),
    guardFor: (overrides = {}) =>
      createGuard<Tx>({ store: live().store, onEvent: (e) => events.push(e), ...overrides }),
    call: (key, work, fields = {}) => ({
      scope: fields.scope ?? 'acct_1',
      key,
      fingerprint: fields.fingerprint ?? 'fp-a',
      operation: 'createPayment',
      ...(fields.retention === undefined ? {} : { retention: fields.retention }),
      work,
    }),
    async holdAsAnotherRequest({ scope = 'acct_1', key = 'k1', value = 'held' } = {}) {
      const inside = deferred();
      const gate = deferred();
      const answered = createGuard<Tx>({ store: live().store }).run({
        scope,
        key,
        fingerprint: 'fp-a',
        operation: 'createPayment',
        work: async () => {
          inside.resolve();
          await gate.promise;
          return value;
        },
      });
      // Should the call not run (the key taken already), the test sees why.
      await Promise.race([inside.promise, answered]);
      const hold: Hold = {
        finish: () => {
          holds.delete(hold);
          gate.resolve();
          return answered;
        },
      };
      holds.add(hold);
      return hold;
    },
  };
}

/** The error code a guarded call failed with, or 'resolved'. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (IdempotencyError.is(error)) return error.code;
    throw error;
  }
  return 'resolved';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
