/**
 * What the `fetch` that `idempotentFetch` wraps is given (SPEC S28): the call as it was made,
 * `init` and all, with the key in `init.headers` in the shape the caller wrote them, so that
 * a wrapper reading `init.headers` sees the key; the same key on every attempt.
 */
import { describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';

const URL_ = 'http://localhost/graphql';
const BODY = '{"query":"mutation { pay }"}';

/** A wrapped fetch that answers 503 first, then 200, and keeps what each attempt gave it. */
function recording() {
  const calls: { input: unknown; init: RequestInit | undefined }[] = [];
  const wrapped = async (input: Request | string | URL, init?: RequestInit) => {
    calls.push({ input, init });
    return new Response('{}', { status: calls.length === 1 ? 503 : 200 });
  };
  return { calls, send: idempotentFetch(wrapped, { baseDelayMs: 1 }) };
}

describe('the wrapped fetch gets init with the key in the headers the caller wrote', () => {
  const shapes = {
    record: () => ({ 'content-type': 'application/json' }),
    Headers: () => new Headers({ 'content-type': 'application/json' }),
    pairs: () => [['content-type', 'application/json']] as [string, string][],
  };
  for (const [shape, make] of Object.entries(shapes)) {
    it(`${shape}: same shape, same key on every attempt, and the caller's headers left alone`, async () => {
      const { calls, send } = recording();
      const headers = make();
      await send(URL_, { method: 'POST', headers, body: BODY });

      expect(calls).toHaveLength(2);
      const keys = calls.map(({ input, init }) => {
        expect(input).toBe(URL_);
        expect(init?.body).toBe(BODY);
        expect(init?.headers?.constructor).toBe(headers.constructor);
        return new Headers(init?.headers).get('idempotency-key');
      });
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(new Headers(headers).has('idempotency-key')).toBe(false);
    });
  }

  it("a caller's own key: init is passed on exactly as given", async () => {
    const { calls, send } = recording();
    const init = { method: 'POST', headers: { 'idempotency-key': 'order-45-2' }, body: BODY };
    await send(URL_, init);
    expect(calls.map((call) => call.init)).toEqual([init, init]);
    expect(calls[0]!.init).toBe(init);
  });

  it('a Request, or a body that can be read once, goes as a fresh copy of the Request per attempt, key included', async () => {
    const { calls, send } = recording();
    await send(new Request(URL_, { method: 'POST', body: BODY }));
    const stream = new Blob([BODY]).stream();
    await send(URL_, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);

    expect(calls).toHaveLength(3); // the second call's first attempt is already a 200
    for (const { input, init } of calls) {
      expect(init).toBeUndefined();
      expect(input).toBeInstanceOf(Request);
      expect(await (input as Request).text()).toBe(BODY);
    }
    const keys = calls.map((call) => (call.input as Request).headers.get('idempotency-key'));
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });
});
