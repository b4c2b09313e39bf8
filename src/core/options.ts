import type { IdempotencyStore } from '../store/seam.js';
import { setupError } from './errors.js';
import type { GuardEventHandler } from './events.js';
import { FINGERPRINT_LIMITS } from './fingerprint.js';
import { jsonSerializer, type Serializer } from './serializer.js';
import type { SetupErrorHandler } from './setup-log.js';

/** Options of `createGuard`. Every duration is in milliseconds. */
export interface GuardOptions<Tx = unknown> {
  /** Where records live: `sqliteStore(...)` or `postgresStore(...)`. */
  store: IdempotencyStore<Tx>;
  /**
   * How long a complete record is replayed (SPEC S14); after that the key counts as new.
   * @default 86_400_000 (24 hours)
   */
  retention?: number;
  /**
   * How long a request waits for an in-flight duplicate to finish before answering 409
   * (SPEC S10). It polls the store without holding a connection. 0 answers 409 at once.
   * @default 0
   */
  wait?: number;
  /**
   * The largest serialized result, in bytes, that will be stored (SPEC S16). A larger one
   * rolls the mutation back with `IDEMPOTENCY_RESULT_TOO_LARGE`.
   * @default 1_048_576 (1 MiB)
   */
  maxResultBytes?: number;
  /**
   * The most bytes of request data (operation text plus input: strings, numbers, keys,
   * binary contents; an object reached on several paths counts once) the guard fingerprints.
   * A larger request is refused with `IDEMPOTENCY_INPUT_TOO_LARGE` (413) before any claim.
   * @default 1_048_576 (1 MiB)
   */
  maxInputBytes?: number;
  /**
   * How deep objects and arrays may nest in a guarded request's input. A deeper one is
   * refused with `IDEMPOTENCY_INPUT_TOO_LARGE` (413) before any claim.
   * @default 128
   */
  maxInputDepth?: number;
  /**
   * Turns results into stored text and back. The default keeps Date, BigInt, Map and Set;
   * pass `superjson` to share your tRPC transformer.
   * @default jsonSerializer
   */
  serializer?: Serializer;
  /** Receives an event for each decision (SPEC S25). Errors it throws are ignored. */
  onEvent?: GuardEventHandler;
  /**
   * Told when the store is not set up (its table, a function of its migrations or a column
   * missing): the message names what is missing and the fix, redacted (SPEC S26). Clients
   * get 503 either way (S15); this is how the operator learns why. Called once per cause,
   * not per request. Errors it throws are ignored.
   * @default the adapter's server logger (Yoga's `logger.error`), else `console.error`
   */
  onSetupError?: SetupErrorHandler;
}

export const GUARD_DEFAULTS = {
  retention: 24 * 60 * 60 * 1000,
  wait: 0,
  maxResultBytes: 1024 * 1024,
  maxInputBytes: FINGERPRINT_LIMITS.maxInputBytes,
  maxInputDepth: FINGERPRINT_LIMITS.maxInputDepth,
  serializer: jsonSerializer,
} as const;

type Observers = 'onEvent' | 'onSetupError';

export type ResolvedGuardOptions<Tx> = Required<Omit<GuardOptions<Tx>, Observers>> &
  Pick<GuardOptions<Tx>, Observers>;

export function resolveGuardOptions<Tx>(options: GuardOptions<Tx>): ResolvedGuardOptions<Tx> {
  const resolved = {
    store: options.store,
    retention: options.retention ?? GUARD_DEFAULTS.retention,
    wait: options.wait ?? GUARD_DEFAULTS.wait,
    maxResultBytes: options.maxResultBytes ?? GUARD_DEFAULTS.maxResultBytes,
    maxInputBytes: options.maxInputBytes ?? GUARD_DEFAULTS.maxInputBytes,
    maxInputDepth: options.maxInputDepth ?? GUARD_DEFAULTS.maxInputDepth,
    serializer: options.serializer ?? GUARD_DEFAULTS.serializer,
    onEvent: options.onEvent,
    onSetupError: options.onSetupError,
  };
  if (!resolved.store) throw setupError('createGuard(): the `store` option is required.');
  for (const name of ['retention', 'maxResultBytes', 'maxInputBytes', 'maxInputDepth'] as const) {
    assertPositive(name, resolved[name]);
  }
  if (!Number.isFinite(resolved.wait) || resolved.wait < 0) {
    throw setupError('createGuard(): `wait` must be a number of milliseconds, 0 or more.');
  }
  return resolved;
}

export function assertPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) {
    throw setupError(`\`${name}\` must be a positive number, got ${value}.`);
  }
}
