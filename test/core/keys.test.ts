import { describe, expect, it } from 'vitest';
import { IdempotencyError, parseKeyHeader, resolveKey, validateKey } from '../../src/index.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return IdempotencyError.is(error) ? error.code : String(error);
  }
  return 'ok';
};

describe('S2: key syntax', () => {
  it('accepts 1 to 255 visible ASCII characters', () => {
    expect(validateKey('a')).toBe('a');
    expect(validateKey('~'.repeat(255))).toBe('~'.repeat(255));
    expect(validateKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['a NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['unicode', 'schlüssel'],
    ['an emoji', 'key-🔑'],
  ])('rejects a key with %s as IDEMPOTENCY_KEY_INVALID', (_, key) => {
    expect(codeOf(() => validateKey(key))).toBe('IDEMPOTENCY_KEY_INVALID');
  });

  it.each([42, {}, [], true])('rejects a non-string key (%j)', (value) => {
    expect(codeOf(() => validateKey(value))).toBe('IDEMPOTENCY_KEY_INVALID');
  });

  it('reads a bare header value and trims surrounding whitespace', () => {
    expect(parseKeyHeader('  abc-123 ')).toBe('abc-123');
    expect(parseKeyHeader(undefined)).toBeUndefined();
    expect(parseKeyHeader(null)).toBeUndefined();
  });

  it('reads an RFC 8941 sf-string header with its escapes', () => {
    expect(parseKeyHeader('"abc"')).toBe('abc');
    expect(parseKeyHeader('"a\\"b\\\\c"')).toBe('a"b\\c');
  });

  it.each([
    ['an unterminated string', '"abc'],
    ['text after the closing quote', '"abc"def'],
    ['an unknown escape', '"a\\nb"'],
    ['an empty quoted string', '""'],
    ['a space inside the quotes', '"a b"'],
    ['a control character inside the quotes', '"a\u0001b"'],
    ['an empty header', '   '],
  ])('rejects a header with %s', (_, raw) => {
    expect(codeOf(() => parseKeyHeader(raw))).toBe('IDEMPOTENCY_KEY_INVALID');
  });
});

describe('S1: key sources', () => {
  it('takes the one key that is present', () => {
    expect(
      resolveKey([
        { source: 'header', value: undefined },
        { source: 'input', value: 'k1' },
      ]),
    ).toBe('k1');
  });

  it('accepts two sources that agree (a quoted header and a bare input)', () => {
    expect(
      resolveKey([
        { source: 'header', value: '"k1"' },
        { source: 'input', value: 'k1' },
      ]),
    ).toBe('k1');
  });

  it('rejects two sources that disagree with IDEMPOTENCY_KEY_INVALID', () => {
    const resolving = () =>
      resolveKey([
        { source: 'header', value: 'k1' },
        { source: 'input', value: 'k2' },
      ]);
    expect(codeOf(resolving)).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(() => resolving()).toThrow(/header and the input disagree/);
  });

  it('returns undefined when no source gave a key (S3 is the caller’s decision)', () => {
    expect(resolveKey([{ source: 'header', value: null }])).toBeUndefined();
  });

  it('S19: errors carry the HTTP status and an RFC 9457 type and title', () => {
    try {
      validateKey('');
      expect.unreachable();
    } catch (error) {
      expect(IdempotencyError.is(error)).toBe(true);
      const e = error as IdempotencyError;
      expect(e.status).toBe(400);
      expect(e.type).toBe('urn:mutation-guard:error:key-invalid');
      expect(e.title).toBe('Invalid idempotency key');
      expect(e.name).toBe('IdempotencyError');
    }
  });
});
