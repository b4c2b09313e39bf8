/**
 * A store wrapper with a hook at each point where a crash or a slow process matters. The
 * real store does all the work; hooks only pause. Crash tests hang there (and get SIGKILLed),
 * takeover tests sleep there, the scheduler test lets fast-check decide when to go on.
 *
 * A store with the one-transaction claim (`claimAndRun`: both shipped stores) keeps it through
 * the wrapper, with the same points: after the claim is inside the transaction, before the
 * work; after the work, before the completion and COMMIT; after the commit. There is no
 * point between a claim and its transaction there, so a `beforeTransaction` hook keeps the
 * wrapper on the lease model (`claim`, then `transaction`), as a process of an earlier
 * version would run against the same table.
 */
import type {
  ClaimAndRunResult,
  ClaimRequest,
  Fence,
  IdempotencyStore,
  WorkEnding,
} from '../../../src/store/index.js';

/** Where a server process can be told to stop dead (FAULT_POINT). */
export const FAULT_POINTS = ['after-claim', 'in-transaction', 'after-commit'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface StoreHooks {
  /**
   * Our claim committed (S7); the business transaction has not begun. Under `claimAndRun`:
   * the key is ours inside the transaction; the work has not begun.
   */
  afterClaim?(request: ClaimRequest, token: string): Promise<void>;
  /** Before the business transaction begins (the window where a takeover can still win). */
  beforeTransaction?(fence: Fence): Promise<void>;
  /** Business writes and the fenced completion are done, COMMIT not yet sent (S8). */
  beforeCommit?(fence: Fence): Promise<void>;
  /** Committed; the answer has not left the process yet. */
  afterCommit?(fence: Fence): Promise<void>;
}

export function instrument<Tx>(
  store: IdempotencyStore<Tx>,
  hooks: StoreHooks,
): IdempotencyStore<Tx> {
  const claimAndRun = store.claimAndRun?.bind(store);
  const oneTransaction = claimAndRun && !hooks.beforeTransaction;
  return {
    ...(oneTransaction && {
      async claimAndRun<T>(
        request: ClaimRequest,
        work: (tx: Tx, claim: { takenOver: boolean }) => Promise<WorkEnding<T>>,
      ): Promise<ClaimAndRunResult<T>> {
        const fence = { scope: request.scope, key: request.key, token: '' };
        const result = await claimAndRun(request, async (tx, claim) => {
          await hooks.afterClaim?.(request, '');
          const ending = await work(tx, claim);
          await hooks.beforeCommit?.(fence);
          return ending;
        });
        if (result.status === 'done') await hooks.afterCommit?.(fence);
        return result;
      },
    }),
    async claim(request) {
      const result = await store.claim(request);
      if (result.status === 'claimed') await hooks.afterClaim?.(request, result.token);
      return result;
    },
    async transaction(fence, work) {
      await hooks.beforeTransaction?.(fence);
      const value = await store.transaction(fence, async (tx) => {
        const inner = await work(tx);
        await hooks.beforeCommit?.(fence);
        return inner;
      });
      await hooks.afterCommit?.(fence);
      return value;
    },
    complete: (fence, completion, tx) => store.complete(fence, completion, tx),
    release: (fence) => store.release(fence),
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
      return { beforeCommit: (fence) => hang(fence.scope, fence.key) };
    case 'after-commit':
      return { afterCommit: (fence) => hang(fence.scope, fence.key) };
  }
}
