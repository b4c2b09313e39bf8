/**
 * Keys, their hash and the adapters' shared checks, to the letter (SPEC S1-S4, S12, S26). Each
 * case here is one a bug planted by `npm run mutate` got past keys.test.ts and adapter.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkAdapterOptions } from '../../src/core/adapter.js';
import { hashKey } from '../../src/core/hash.js';
import {
  GLOBAL_SCOPE,
  isRollback,
  MAX_KEY_LENGTH,
  parseKeyHeader,
  readKeyHeader,
  resolveKey,
  rollback,
  validateKey,
} from '../../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const codeOf = (run: () => unknown) => {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

describe('S2: what a key may look like', () => {
  it(`takes ${MAX_KEY_LENGTH} characters and refuses ${MAX_KEY_LENGTH + 1}, from any source`, () => {
    expect(validateKey('k'.repeat(MAX_KEY_LENGTH))).toBe('k'.repeat(MAX_KEY_LENGTH));
    expect(codeOf(() => validateKey('k'.repeat(MAX_KEY_LENGTH + 1)))).toBe(
      'IDEMPOTENCY_KEY_INVALID',
    );
    expect(codeOf(() => parseKeyHeader(`"${'k'.repeat(MAX_KEY_LENGTH + 1)}"`))).toBe(
      'IDEMPOTENCY_KEY_INVALID',
    );
  });

  it('takes every visible ASCII character inside a quoted header, ~ included', () => {
    expect(parseKeyHeader('"a~b!"')).toBe('a~b!');
    expect(parseKeyHeader('"~"')).toBe('~');
  });

  it('reads only the header as an RFC 8941 string: quotes in an input are part of the key, and a number there is refused', () => {
    expect(resolveKey([{ source: 'input', value: '"abc"' }])).toBe('"abc"');
    expect(resolveKey([{ source: 'header', value: '"abc"' }])).toBe('abc');
    expect(codeOf(() => resolveKey([{ source: 'input', value: 123 }]))).toBe(
      'IDEMPOTENCY_KEY_INVALID',
    );
  });
});

describe('S26: the key hash', () => {
  it('is the first 12 hex characters of the SHA-256 of the key', () => {
    expect(hashKey('order-1')).toBe(
      createHash('sha256').update('order-1').digest('hex').slice(0, 12),
    );
  });
});

describe('S12: rollback', () => {
  it('does not keep the answer unless asked', () => {
    expect(rollback('declined').keep).toBe(false);
    expect(rollback('declined', { keep: true }).keep).toBe(true);
  });

  it('tells a rollback from any other answer, null and primitives included', () => {
    expect(isRollback(rollback(1))).toBe(true);
    for (const value of [null, undefined, 0, '', 'text', false, {}, { value: 1, keep: true }]) {
      expect(isRollback(value), String(value)).toBe(false);
    }
  });
});

describe('S4: the adapters at start-up', () => {
  it('refuses an adapter without a guard', () => {
    expect(() => checkAdapterOptions('useIdempotency()', {})).toThrow(
      /useIdempotency\(\): the `guard` option is required/,
    );
  });

  it('warns about the one global scope only when there is no scope option', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    checkAdapterOptions('idempotency()', { guard: {}, scope: () => 'acct' });
    expect(warn).not.toHaveBeenCalled();
    checkAdapterOptions('idempotency()', { guard: {} });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("names the one global scope 'global', as the records of earlier versions have it", () => {
    expect(GLOBAL_SCOPE).toBe('global');
  });
});

describe('S1: the key header in a context', () => {
  it('reads the first place that holds headers: a request without headers is passed over', () => {
    expect(readKeyHeader({ request: {}, req: { headers: { 'idempotency-key': 'k1' } } })).toBe(
      'k1',
    );
    expect(
      readKeyHeader({
        request: { headers: null },
        headers: new Headers({ 'Idempotency-Key': 'k2' }),
      }),
    ).toBe('k2');
    expect(readKeyHeader({ headers: 'not headers' })).toBeUndefined();
    expect(readKeyHeader(null)).toBeUndefined();
  });
});
