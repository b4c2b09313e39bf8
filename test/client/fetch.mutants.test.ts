/**
 * `idempotentFetch` and the key helpers on a stub `fetch`, no server (SPEC S28, S29): which
 * requests it keys and retries, with which key, on which answers, and with the caller's
 * options and signal. Each case here is one a bug planted by `npm run mutate` got past the
 * other client tests that run in a second (fetch.test.ts runs the same client against the
 * demo behind a fault proxy, and is too slow to run for each planted bug).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Fetch,
  idempotentFetch,
  newIdempotencyKey,
  wasReplayed,
} from '../../src/client/index.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const URL_ = 'http://localhost/graphql';
const FAST = { baseDelayMs: 1, maxDelayMs: 2 };
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** A fetch that answers from `answers` in turn, and notes each request's method and key. */
function stub(answers: (() => Response | Promise<Response>)[]) {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const fetch: Fetch = async (input, init) => {
    const request = new Request(input, init);
    seen.push({
      method: request.method,
      key: request.headers.get('idempotency-key'),
      body: await request.text(),
    });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    return answer();
  };
  return { fetch, seen };
}

const post = { method: 'POST', body: '{"query":"mutation { pay }"}' };

describe('S28/S29: what idempotentFetch retries, always with the one key of the call', () => {
  it('retries a network error (its outcome unknown) with the same key and the same body', async () => {
    const { fetch, seen } = stub([
      () => Promise.reject(new TypeError('fetch failed')),
      () => json(200, { data: { pay: 1 } }),
    ]);
    const response = await idempotentFetch(fetch, FAST)(URL_, post);
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.key).toBe(seen[0]!.key);
    expect(seen[1]!.body).toBe(post.body);
  });

  it('retries a 503, and a 409 whose body names IDEMPOTENCY_KEY_IN_USE though no Retry-After is visible (CORS)', async () => {
    const inUse = { errors: [{ extensions: { code: 'IDEMPOTENCY_KEY_IN_USE' } }] };
    const { fetch, seen } = stub([
      () => json(503, { errors: [] }),
      () => json(409, inUse),
      () => json(200, { data: { pay: 1 } }),
    ]);
    const response = await idempotentFetch(fetch, FAST)(URL_, post);
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
  });

  it("answers an application's own 409 at once, its body left for the caller", async () => {
    const { fetch, seen } = stub([() => json(409, { errors: [{ message: 'seat taken' }] })]);
    const response = await idempotentFetch(fetch, FAST)(URL_, post);
    expect(seen).toHaveLength(1);
    expect(await response.json()).toEqual({ errors: [{ message: 'seat taken' }] });
  });

  it('takes the caller’s attempts, and stops at once when the request’s signal aborts', async () => {
    const unavailable = stub([() => json(503, {})]);
    const response = await idempotentFetch(unavailable.fetch, { ...FAST, attempts: 2 })(URL_, post);
    expect(response.status).toBe(503);
    expect(unavailable.seen).toHaveLength(2);

    const controller = new AbortController();
    const slow = stub([() => json(409, {}, { 'retry-after': '10' })]);
    const started = Date.now();
    const call = idempotentFetch(slow.fetch)(URL_, { ...post, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left')), 50);
    await expect(call).rejects.toMatchObject({ message: 'user left' });
    expect(slow.seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('passes GET, HEAD and OPTIONS through once, unkeyed and never retried', async () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'head']) {
      const { fetch, seen } = stub([() => new Response(null, { status: 503 })]);
      const response = await idempotentFetch(fetch, FAST)(URL_, { method });
      expect(response.status, method).toBe(503);
      expect(seen, method).toEqual([{ method: method.toUpperCase(), key: null, body: '' }]);
    }
  });

  it('uses the global fetch when given none, read at call time', async () => {
    const { fetch, seen } = stub([() => json(200, {})]);
    const pay = idempotentFetch(undefined, FAST);
    vi.stubGlobal('fetch', fetch);
    expect((await pay(URL_, post)).status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('S28/S9: keys and replays', () => {
  it('refuses to make a key where crypto.randomUUID is missing (an insecure browser context), saying to pass one', () => {
    vi.stubGlobal('crypto', {});
    expect(() => newIdempotencyKey()).toThrow(/randomUUID\(\) is not available.*pass your own key/);
    vi.stubGlobal('crypto', undefined);
    expect(() => newIdempotencyKey()).toThrow(/pass your own key/);
  });

  it('tells a replay by Idempotent-Replayed: true, in any case, and nothing else', () => {
    const answer = (headers: Record<string, string>) => ({ headers: new Headers(headers) });
    expect(wasReplayed(answer({ 'Idempotent-Replayed': 'true' }))).toBe(true);
    expect(wasReplayed(answer({ 'idempotent-replayed': ' TRUE ' }))).toBe(true);
    expect(wasReplayed(answer({ 'Idempotent-Replayed': 'false' }))).toBe(false);
    expect(wasReplayed(answer({}))).toBe(false);
  });
});
