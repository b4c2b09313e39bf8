/**
 * The retry loop every client shares (SPEC S29): bounded attempts and deadline, exponential
 * backoff with full jitter, at least `Retry-After` when the server names one, and an
 * `AbortSignal` that stops it at once, also between attempts.
 */
import type { RetryReason, Verdict } from './verdict.js';

export interface RetryOptions {
  /**
   * Most attempts in all, the first included.
   * @default 5
   */
  attempts?: number;
  /**
   * No new attempt starts later than this many milliseconds after the first one.
   * @default 30_000
   */
  deadlineMs?: number;
  /**
   * The backoff's first ceiling; it doubles with each retry.
   * @default 100
   */
  baseDelayMs?: number;
  /**
   * The backoff's largest ceiling.
   * @default 5_000
   */
  maxDelayMs?: number;
  /** Told before each wait: for logs and metrics. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  reason: RetryReason;
  /** How long until the next attempt. */
  delayMs: number;
}

export const RETRY_DEFAULTS = {
  attempts: 5,
  deadlineMs: 30_000,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
} as const;

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `attempt` until `judge` says stop, attempts or deadline run out, or `signal` aborts.
 * Gives back what the last attempt gave (its value, or its error rethrown): a caller who ran
 * out of retries sees the real last answer, a 409 or a network error, not a wrapper.
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  judge: (outcome: Outcome<T>) => Verdict | Promise<Verdict>,
  options: RetryOptions & { signal?: AbortSignal | undefined | null } = {},
): Promise<T> {
  const { signal, onRetry } = options;
  const attempts = Math.max(1, options.attempts ?? RETRY_DEFAULTS.attempts);
  const deadlineMs = options.deadlineMs ?? RETRY_DEFAULTS.deadlineMs;
  const started = Date.now();
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: await attempt(n) };
    } catch (error) {
      // An abort is the caller's decision, never a network error to retry.
      signal?.throwIfAborted();
      outcome = { ok: false, error };
    }
    const verdict = await judge(outcome);
    const delayMs = verdict.retry ? backoff(n, verdict.retryAfterMs, options) : 0;
    const giveUp = !verdict.retry || n >= attempts || Date.now() + delayMs - started > deadlineMs;
    if (giveUp) {
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    }
    if (verdict.retry) onRetry?.({ attempt: n, reason: verdict.reason, delayMs });
    await sleep(delayMs, signal);
  }
}

/**
 * Full jitter: a random wait between 0 and a ceiling that doubles per retry, so that many
 * clients failed by one outage do not come back in step. With `Retry-After`, at least that.
 */
export function backoff(
  failedAttempt: number,
  retryAfterMs: number | undefined,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'> = {},
): number {
  const base = options.baseDelayMs ?? RETRY_DEFAULTS.baseDelayMs;
  const max = options.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs;
  const ceiling = Math.min(max, base * 2 ** (failedAttempt - 1));
  const jitter = Math.random() * ceiling;
  return retryAfterMs === undefined ? jitter : retryAfterMs + jitter;
}

function sleep(ms: number, signal: AbortSignal | undefined | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
