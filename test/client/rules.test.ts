/**
 * The retry rules every client shares (SPEC S29), and what the client modules may import:
 * nothing Node-only, so that they run in browsers, Bun and workers too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  answerVerdict,
  backoff,
  codesInBody,
  idempotentFetch,
  newIdempotencyKey,
  withRetries,
} from '../../src/client/index.js';

const headers = (init: Record<string, string> = {}) => new Headers(init);

describe('S29: which answers are retried', () => {
  it('retries 409 IDEMPOTENCY_KEY_IN_USE after its Retry-After, and 503', () => {
    expect(
      answerVerdict({
        status: 409,
        headers: headers({ 'retry-after': '2' }),
        codes: ['IDEMPOTENCY_KEY_IN_USE'],
      }),
    ).toEqual({ retry: true, reason: 'in-use', retryAfterMs: 2000 });
    expect(answerVerdict({ status: 503, codes: ['IDEMPOTENCY_STORE_UNAVAILABLE'] })).toEqual({
      retry: true,
      reason: 'unavailable',
    });
  });

  it("never retries 400, 422, the mutation's own errors, or an application's own 409", () => {
    for (const status of [200, 400, 401, 404, 422, 500]) {
      expect(answerVerdict({ status, headers: headers(), codes: [] })).toEqual({ retry: false });
    }
    expect(answerVerdict({ status: 422, codes: ['IDEMPOTENCY_KEY_REUSED'] }).retry).toBe(false);
    expect(answerVerdict({ status: 409, headers: headers(), codes: ['SEAT_TAKEN'] }).retry).toBe(
      false,
    );
  });

  it('finds the codes GraphQL and tRPC bodies carry', () => {
    expect(codesInBody({ errors: [{ extensions: { code: 'IDEMPOTENCY_KEY_IN_USE' } }] })).toContain(
      'IDEMPOTENCY_KEY_IN_USE',
    );
    expect(
      codesInBody([{ error: { json: { data: { idempotencyCode: 'IDEMPOTENCY_KEY_IN_USE' } } } }]),
    ).toContain('IDEMPOTENCY_KEY_IN_USE');
  });
});

describe('S29: backoff, attempts and deadline', () => {
  it('waits a random time under a ceiling that doubles and is capped (full jitter), at least Retry-After', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1_000 };
    for (let i = 0; i < 200; i++) {
      expect(backoff(1, undefined, options)).toBeLessThan(100);
      expect(backoff(3, undefined, options)).toBeLessThan(400);
      expect(backoff(10, undefined, options)).toBeLessThan(1_000);
      expect(backoff(1, 2_000, options)).toBeGreaterThanOrEqual(2_000);
    }
    const waits = Array.from({ length: 200 }, () => backoff(4, undefined, options));
    expect(new Set(waits).size).toBeGreaterThan(150); // spread, not in step
  });

  it('gives up, with the last answer, when the next wait would pass the deadline', async () => {
    let calls = 0;
    const started = Date.now();
    const last = await withRetries(
      async () => ++calls,
      () => ({ retry: true, reason: 'in-use', retryAfterMs: 5_000 }),
      { attempts: 10, deadlineMs: 1_000 },
    );
    expect(last).toBe(1);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('rethrows the last network error once attempts run out', async () => {
    let calls = 0;
    const failing = () => Promise.reject(new TypeError(`fetch failed ${++calls}`));
    await expect(
      withRetries(failing, () => ({ retry: true, reason: 'network' }), {
        attempts: 3,
        baseDelayMs: 1,
      }),
    ).rejects.toThrow('fetch failed 3');
  });
});

describe('S28: keys', () => {
  it('makes a new random key per intent and keeps a key the caller sets', async () => {
    expect(newIdempotencyKey()).not.toBe(newIdempotencyKey());
    const seen: (string | null)[] = [];
    const pay = idempotentFetch(async (input, init) => {
      seen.push(new Request(input, init).headers.get('idempotency-key'));
      return new Response('{}', { status: 200 });
    });
    await pay('http://localhost/graphql', { method: 'POST', body: '{}' });
    await pay('http://localhost/graphql', { method: 'POST', body: '{}' });
    await pay('http://localhost/graphql', {
      method: 'POST',
      body: '{}',
      headers: { 'Idempotency-Key': 'order-1' },
    });
    await pay('http://localhost/graphql'); // a GET passes through unkeyed
    expect(seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).not.toBe(seen[0]);
    expect(seen.slice(2)).toEqual(['order-1', null]);
  });
});

describe('what the client modules import', () => {
  const root = new URL('../../src/client/', import.meta.url);
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.ts'),
  );
  const allowed: Record<string, string[]> = {
    trpc: ['@trpc/client', '@trpc/server', '@trpc/server/observable'],
    apollo: ['@apollo/client/link', 'rxjs'],
    urql: ['@urql/core'],
  };

  it('nothing Node-only, nothing of the server side, and each adapter only its own library', () => {
    // Under `npm run mutate` these are StrykerJS's instrumented copies, which read `process.`
    // for their switches; the check is about the files as committed, so it steps aside.
    if (process.env.STRYKER_MUTATOR_WORKER !== undefined) return;
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const source = readFileSync(new URL(file, root), 'utf8');
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      const folder = file.includes('/') ? file.split('/')[0]! : '';
      for (const specifier of imports) {
        if (specifier.startsWith('./') || specifier.startsWith('../')) {
          // Relative imports stay inside src/client: never the server half.
          expect(new URL(specifier, new URL(file, root)).pathname, file).toContain('/src/client/');
          continue;
        }
        expect(allowed[folder] ?? [], `${file} imports ${specifier}`).toContain(specifier);
      }
      expect(source, file).not.toMatch(/\bprocess\.|\bBuffer\b|require\(/);
    }
  });
});
