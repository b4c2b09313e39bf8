/**
 * The retry loop's promises kept to the letter (SPEC S29): the backoff's ceiling and jitter,
 * the wait really waited, `onRetry` told before each wait, the last error given back as it
 * was, and an abort honoured at once, also while waiting. Each case here is one a bug planted
 * by `npm run mutate` got past rules.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoff, type RetryEvent, withRetries } from '../../src/client/index.js';
import { anySignal } from '../../src/client/signals.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

/** What a promise settled with: ['ok', value] or ['err', reason]. */
const settled = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ['ok', value],
    (reason: unknown) => ['err', reason],
  );

describe('S29: exponential backoff with full jitter', () => {
  it('draws each wait between 0 and a ceiling that starts at baseDelayMs, doubles per retry and stops at maxDelayMs', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1_000 };
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    expect([1, 2, 3, 4, 5, 6].map((n) => backoff(n, undefined, options))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect(backoff(2, 2_000, options)).toBe(2_100);
  });
});

describe('S29: the loop', () => {
  it('waits the backoff before the next attempt, and tells onRetry the attempt, the reason and the wait first', async () => {
    const events: RetryEvent[] = [];
    const times: number[] = [];
    const value = await withRetries(
      async (n) => {
        times.push(Date.now());
        return n;
      },
      (outcome) =>
        outcome.ok && outcome.value < 3
          ? { retry: true, reason: 'in-use', retryAfterMs: 150 }
          : { retry: false },
      { baseDelayMs: 1, maxDelayMs: 1, onRetry: (event) => events.push(event) },
    );
    expect(value).toBe(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(145);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(145);
    expect(events).toHaveLength(2);
    expect(events.map(({ attempt, reason }) => ({ attempt, reason }))).toEqual([
      { attempt: 1, reason: 'in-use' },
      { attempt: 2, reason: 'in-use' },
    ]);
    for (const event of events) {
      expect(event.delayMs).toBeGreaterThanOrEqual(150);
      expect(event.delayMs).toBeLessThanOrEqual(151);
    }
  });

  it('hands the judge a failed attempt as { ok: false, error } and, out of attempts, rethrows that very error', async () => {
    const errors = [new TypeError('fetch failed 1'), new TypeError('fetch failed 2')];
    const seen: unknown[] = [];
    const last = await settled(
      withRetries(
        (n) => Promise.reject(errors[n - 1]),
        (outcome) => {
          seen.push(outcome);
          return { retry: true, reason: 'network' };
        },
        { attempts: 2, baseDelayMs: 1 },
      ),
    );
    expect(seen).toEqual([
      { ok: false, error: errors[0] },
      { ok: false, error: errors[1] },
    ]);
    expect(last).toEqual(['err', errors[1]]);
    expect((last[1] as Error).message).toBe('fetch failed 2');
  });

  it('stops at once when the caller aborts during the wait, with the abort reason', async () => {
    const controller = new AbortController();
    let calls = 0;
    const started = Date.now();
    const run = settled(
      withRetries(
        async () => ++calls,
        () => ({ retry: true, reason: 'in-use', retryAfterMs: 10_000 }),
        { signal: controller.signal, deadlineMs: 60_000 },
      ),
    );
    setTimeout(() => controller.abort(new Error('user left')), 50);
    const [how, reason] = await run;
    expect(how).toBe('err');
    expect((reason as Error).message).toBe('user left');
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops at once when the caller aborts while an answer is being judged, before any wait', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const [how, reason] = await settled(
      withRetries(
        async () => 'busy',
        () => {
          controller.abort(new Error('user left'));
          return { retry: true, reason: 'in-use', retryAfterMs: 10_000 };
        },
        { signal: controller.signal, deadlineMs: 60_000 },
      ),
    );
    expect(how).toBe('err');
    expect((reason as Error).message).toBe('user left');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('S29: one abort signal from the caller and the helper', () => {
  for (const native of [true, false]) {
    it(`aborts when either aborts, with its reason${native ? '' : ', also where AbortSignal.any is missing'}`, () => {
      if (!native) vi.stubGlobal('AbortSignal', { abort: AbortSignal.abort.bind(AbortSignal) });
      const caller = new AbortController();
      const helper = new AbortController();
      const both = anySignal([caller.signal, helper.signal]);
      expect(both.aborted).toBe(false);
      helper.abort('stop');
      expect(both.aborted).toBe(true);
      expect(both.reason).toBe('stop');
      expect(caller.signal.aborted).toBe(false);

      const done = new AbortController();
      done.abort('already');
      const late = anySignal([new AbortController().signal, done.signal]);
      expect(late.aborted).toBe(true);
      expect(late.reason).toBe('already');
    });
  }
});
