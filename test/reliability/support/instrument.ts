/**
 * A store wrapper with a hook at each point where a crash or a slow process matters. The
 * real store does all the work; hooks only pause. Crash tests hang there (and get SIGKILLed).
 * The points, inside the store's one transaction: after the claim, before the work; after
 * the work, before the record and COMMIT; after the commit.
 */
import type {
  ClaimAndRunResult,
  ClaimRequest,
  IdempotencyStore,
  WorkEnding,
} from '../../../src/store/index.js';

/** Where a server process can be told to stop dead (FAULT_POINT). */
export const FAULT_POINTS = ['after-claim', 'in-transaction', 'after-commit'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface StoreHooks {
  /** The key is ours inside the transaction (S7); the work has not begun. */
  afterClaim?(request: ClaimRequest): Promise<void>;
  /** The business writes are done; the record and COMMIT not yet sent (S8). */
  beforeCommit?(request: ClaimRequest): Promise<void>;
  /** Committed; the answer has not left the process yet. */
  afterCommit?(request: ClaimRequest): Promise<void>;
}

export function instrument<Tx>(
  store: IdempotencyStore<Tx>,
  hooks: StoreHooks,
): IdempotencyStore<Tx> {
  return {
    async claimAndRun<T>(
      request: ClaimRequest,
      work: (tx: Tx) => Promise<WorkEnding<T>>,
    ): Promise<ClaimAndRunResult<T>> {
      const result = await store.claimAndRun(request, async (tx) => {
        await hooks.afterClaim?.(request);
        const ending = await work(tx);
        await hooks.beforeCommit?.(request);
        return ending;
      });
      if (result.status === 'done') await hooks.afterCommit?.(request);
      return result;
    },
    purge: (options) => store.purge(options),
  };
}

/**
 * Hooks that announce the fault point on stdout (the parent test waits for this line) and
 * then never go on: the process sits there, holding whatever it holds, until SIGKILL.
 */
export function hangAt(point: FaultPoint, announce: (line: string) => void): StoreHooks {
  const hang = (scope: string, key: string) => {
    announce(`FAULT ${point} ${JSON.stringify({ scope, key })}`);
    return new Promise<void>(() => {});
  };
  switch (point) {
    case 'after-claim':
      return { afterClaim: (request) => hang(request.scope, request.key) };
    case 'in-transaction':
      return { beforeCommit: (request) => hang(request.scope, request.key) };
    case 'after-commit':
      return { afterCommit: (request) => hang(request.scope, request.key) };
  }
}
