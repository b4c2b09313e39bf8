import { hash } from 'node:crypto';

/**
 * Hex SHA-256 of a string (as UTF-8). The one-shot `crypto.hash` (Node 20.12+, within the
 * package's engines) skips the Hash object `createHash` builds: a guarded call hashes its key
 * and its fingerprint, and for such short texts that object was most of the cost.
 */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * A short, stable hash of an idempotency key (SPEC S26). Logs, events and error messages
 * carry this instead of the key, which may be guessable or carry client data.
 */
export function hashKey(key: string): string {
  return sha256(key).slice(0, 12);
}
