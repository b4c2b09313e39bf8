/**
 * What any guarding middleware or plugin takes from a mutation before it can look at its key,
 * fresh call or replay alike: the key from the header (SPEC S1), and one SHA-256 of the
 * request (S5, S6: a key answers only the request that made it, and its record stores that
 * request's digest). The least adapters (bench/apps) take both here, once per call.
 *
 * It does less than any guard could: the digest covers the request's JSON as the adapter has
 * it (S5 asks for a canonical encoding with sorted keys and typed values, which costs more),
 * and nobody compares it with a record's (written by the library's encoding, it would not
 * match; a string comparison costs nothing measurable). Its work, not its value, is the point.
 * The bench always sends a key; a request without one is a broken case.
 */
import { sha256 } from '../../src/core/hash.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../src/core/vocabulary.js';

export interface LeastRequest {
  key: string;
  digest: string;
}

/** The key of a request with these headers, and the digest of `request` (its JSON). */
export function leastRequest(
  headers: { get(name: string): string | null },
  request: string,
): LeastRequest {
  const key = headers.get(IDEMPOTENCY_KEY_HEADER);
  if (key === null) throw new Error('bench: the least adapter is sent no key');
  return { key, digest: sha256(request) };
}
