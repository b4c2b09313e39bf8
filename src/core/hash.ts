import { createHash } from 'node:crypto';

/** Hex SHA-256 of a string. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A short, stable hash of an idempotency key (SPEC S26). Logs, events and error messages
 * carry this instead of the key, which may be guessable or carry client data.
 */
export function hashKey(key: string): string {
  return sha256(key).slice(0, 12);
}
