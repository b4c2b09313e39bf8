/**
 * The vocabulary both adapters share (src/core/adapter.ts): where the default `keyHeader`
 * finds the key header, what a `scope` must return, and that the client helpers send and
 * read the headers by the names the server uses.
 */
import { describe, expect, it } from 'vitest';
import * as client from '../../src/client/index.js';
import { scopeOf } from '../../src/core/adapter.js';
import {
  GLOBAL_SCOPE,
  IDEMPOTENCY_KEY_HEADER,
  REPLAYED_HEADER,
  readKeyHeader,
} from '../../src/index.js';

describe('readKeyHeader, the default keyHeader of both adapters (SPEC S1)', () => {
  it.each([
    [
      'a Fetch Request at ctx.request (Yoga)',
      { request: new Request('http://x', { headers: { 'Idempotency-Key': 'k1' } }) },
    ],
    [
      'a Fetch Request at ctx.req (tRPC fetch adapter)',
      { req: new Request('http://x', { headers: { 'idempotency-key': 'k1' } }) },
    ],
    [
      'Node headers at ctx.req (Express, standalone)',
      { req: { headers: { 'idempotency-key': 'k1' } } },
    ],
    [
      'headers at ctx.headers (Next.js style)',
      { headers: new Headers({ 'Idempotency-Key': 'k1' }) },
    ],
  ])('reads %s', (_, context) => {
    expect(readKeyHeader(context)).toBe('k1');
  });

  it('reads the first place that holds headers, joins repeated Node headers, and gives undefined without a request', () => {
    const request = new Request('http://x');
    expect(
      readKeyHeader({ request, req: { headers: { 'idempotency-key': 'other' } } }),
    ).toBeUndefined();
    expect(readKeyHeader({ req: { headers: { 'idempotency-key': ['a', 'b'] } } })).toBe('a, b');
    expect(readKeyHeader({ userId: 'server' })).toBeUndefined();
    expect(readKeyHeader(undefined)).toBeUndefined();
  });
});

describe('scopeOf, the scope check of both adapters (SPEC S4, S15)', () => {
  it('S4: without a scope option every record is in the global scope; with one, its string', async () => {
    expect(await scopeOf(undefined, {})).toBe(GLOBAL_SCOPE);
    expect(await scopeOf(async (ctx: { id: string }) => ctx.id, { id: 'acct_1' })).toBe('acct_1');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['number', 42],
  ])('S15: a scope that returns %s is a setup error, not a store outage', async (got, value) => {
    const scope = () => value as unknown as string;
    await expect(scopeOf(scope, {})).rejects.toThrow(
      new TypeError(
        `mutation-guard: the \`scope\` option must return a string, but it returned ${got}.`,
      ),
    );
  });
});

describe('header names (SPEC S1, S9)', () => {
  it('the client helpers send and read the headers by the names the server uses', () => {
    // src/client may not import the server half, so it spells them itself.
    expect(client.IDEMPOTENCY_KEY_HEADER).toBe(IDEMPOTENCY_KEY_HEADER);
    expect(client.REPLAYED_HEADER).toBe(REPLAYED_HEADER);
  });
});
