/**
 * What one answer means for the next attempt (SPEC S29), case by case: the answers a server
 * that hides its codes, a browser that cannot read `Retry-After`, or a tRPC batch gives. Each
 * case here is one a bug planted by `npm run mutate` got past rules.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { answerVerdict, codesInBody, readRetryAfter } from '../../src/client/index.js';

const IN_USE = 'IDEMPOTENCY_KEY_IN_USE';
const UNAVAILABLE = 'IDEMPOTENCY_STORE_UNAVAILABLE';
const retryAfter = (value: string) => new Headers({ 'retry-after': value });

describe('S29: which answers are retried, whatever the body says', () => {
  it('retries a 409 that carries Retry-After but no code (an error formatter hid it), and one that names IN_USE but shows no Retry-After (CORS hid it)', () => {
    expect(answerVerdict({ status: 409, headers: retryAfter('3') })).toEqual({
      retry: true,
      reason: 'in-use',
      retryAfterMs: 3000,
    });
    expect(answerVerdict({ status: 409, headers: new Headers(), codes: [IN_USE] })).toEqual({
      retry: true,
      reason: 'in-use',
    });
  });

  it('never retries a 409 with neither code nor Retry-After, nor another status that sends Retry-After (a 429 or a 200)', () => {
    expect(answerVerdict({ status: 409, headers: new Headers() })).toEqual({ retry: false });
    for (const status of [200, 429]) {
      expect(answerVerdict({ status, headers: retryAfter('1') })).toEqual({ retry: false });
    }
  });

  it('retries a 503 whose body was not read, and a store failure named in the body under any status', () => {
    expect(answerVerdict({ status: 503 })).toEqual({ retry: true, reason: 'unavailable' });
    expect(answerVerdict({ status: 500, codes: [UNAVAILABLE] })).toEqual({
      retry: true,
      reason: 'unavailable',
    });
    expect(answerVerdict({ status: 503, headers: retryAfter('2') })).toEqual({
      retry: true,
      reason: 'unavailable',
      retryAfterMs: 2000,
    });
  });
});

describe('S29: Retry-After, in seconds or as an HTTP date', () => {
  it('reads delay-seconds of more than one digit', () => {
    expect(readRetryAfter(retryAfter('12'))).toBe(12_000);
  });

  it('reads an HTTP date as the time left until it, and a date past as no wait', () => {
    const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString();
    const left = readRetryAfter(retryAfter(inThreeSeconds))!;
    expect(left).toBeGreaterThan(1_000);
    expect(left).toBeLessThanOrEqual(3_000);
    expect(readRetryAfter(retryAfter(new Date(Date.now() - 60_000).toUTCString()))).toBe(0);
  });

  it('ignores a value that is neither (never a wait of NaN)', () => {
    for (const value of ['5s', 'abc5', '1e3', 'x']) {
      expect(readRetryAfter(retryAfter(value)), value).toBeUndefined();
    }
  });
});

describe('S29: the codes a body carries', () => {
  it('reads GraphQL errors beside `"data": null`, as a failed mutation answers', () => {
    expect(codesInBody({ data: null, errors: [{ extensions: { code: IN_USE } }] })).toEqual([
      IN_USE,
    ]);
    expect(codesInBody({ errors: [null, 'text', { extensions: { code: IN_USE } }] })).toEqual([
      IN_USE,
    ]);
  });

  it("gives exactly the string codes: a tRPC error's numeric JSON-RPC code is not one", () => {
    const trpc = {
      error: { json: { code: -32603, data: { code: 'CONFLICT', idempotencyCode: IN_USE } } },
    };
    expect(codesInBody(trpc)).toEqual(['CONFLICT', IN_USE]);
    expect(codesInBody([trpc, { result: { data: { json: 1 } } }])).toEqual(['CONFLICT', IN_USE]);
  });

  it('stops at a bounded depth, so an object that refers to itself ends', () => {
    const error: Record<string, unknown> = { code: IN_USE };
    error.error = error;
    const list: unknown[] = [];
    list.push(list, { code: UNAVAILABLE });
    expect(codesInBody(error)).toContain(IN_USE);
    expect(codesInBody({ errors: list })).toContain(UNAVAILABLE);
  });
});
