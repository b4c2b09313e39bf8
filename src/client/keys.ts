/**
 * One key per intent (SPEC S28): a fresh random UUID for each logical mutation, unless the
 * caller brings its own (an order or checkout id, for an intent that must survive a reload).
 */

/** The request header that carries the key. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header by which the server says it answered from its stored result. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * A new random key. Uses the platform's `crypto.randomUUID()` (browsers, Node 20, Bun,
 * workers); no Node-only module is imported.
 */
export function newIdempotencyKey(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID !== 'function') {
    throw new Error(
      'mutation-guard/client: crypto.randomUUID() is not available here (it needs a secure context in browsers); pass your own key instead.',
    );
  }
  return crypto.randomUUID();
}

/** Whether a response's headers say it was replayed (`Idempotent-Replayed: true`). */
export function wasReplayed(response: { headers: Pick<Headers, 'get'> }): boolean {
  return response.headers.get(REPLAYED_HEADER)?.trim().toLowerCase() === 'true';
}

/** How a helper keys a call that brings no key of its own. */
export interface KeyOptions {
  /**
   * Makes the key of a call that brings none of its own.
   * @default newIdempotencyKey (crypto.randomUUID())
   */
  newKey?: () => string;
}

/** What a client helper reports about one keyed call once it settles. */
export interface IdempotencyReceipt {
  key: string;
  /** The server answered from its stored result (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /** HTTP requests sent for this call, the first included. */
  attempts: number;
}
