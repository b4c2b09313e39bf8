/**
 * A call's headers in whichever shape the caller wrote them (a record, a `Headers`, an array
 * of name-value pairs), read and added to without changing that shape: a wrapping `fetch`
 * or a client library then finds the key where it finds the caller's other headers.
 */
import { IDEMPOTENCY_KEY_HEADER } from './keys.js';

export type HeaderList = NonNullable<RequestInit['headers']>;

/**
 * Every value the headers give `Idempotency-Key`, whatever the letter case of its name (HTTP
 * names are case-insensitive). A `Headers` has already joined repeated values into one.
 */
export function keyHeaderValues(headers: HeaderList | null | undefined): string[] {
  if (!headers) return [];
  if (isHeaders(headers)) {
    const value = headers.get(IDEMPOTENCY_KEY_HEADER);
    return value === null ? [] : [value];
  }
  const entries: [string, unknown][] = Array.isArray(headers)
    ? headers.map(([name, ...values]) => [name ?? '', values])
    : Object.entries(headers);
  return entries
    .filter(([name]) => name.toLowerCase() === IDEMPOTENCY_KEY_HEADER.toLowerCase())
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]).map(String));
}

/**
 * The same headers, in the same shape, with `Idempotency-Key: key` added. The caller's own
 * object is left as it was: it may serve its next call too, which is another intent.
 */
export function withKeyHeader(headers: HeaderList | null | undefined, key: string): HeaderList {
  if (headers && isHeaders(headers)) {
    const copy = new Headers(headers);
    copy.set(IDEMPOTENCY_KEY_HEADER, key);
    return copy;
  }
  if (Array.isArray(headers)) return [...headers, [IDEMPOTENCY_KEY_HEADER, key]];
  return { ...headers, [IDEMPOTENCY_KEY_HEADER]: key };
}

/** Duck-typed: a polyfill's `Headers` is not the global class. */
function isHeaders(headers: HeaderList): headers is Headers {
  const candidate = headers as Partial<Headers>;
  return typeof candidate.get === 'function' && typeof candidate.forEach === 'function';
}
