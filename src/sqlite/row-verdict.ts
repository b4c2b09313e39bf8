/**
 * What a claim may do with the row it found for its key (SPEC S6, S11, S14), in either of
 * S11's models: the lease claim (`claim`) and the one-transaction claim (`claimAndRun`) read
 * the row the same way and differ only in how they write.
 */
import type { RecordRow } from '../store/records.js';

export type RowVerdict =
  /** S11: an in-flight claim whose lease ran out; the caller runs the same request. */
  | 'take-over'
  /** S14: a record past its whole expiry counts as absent, whatever its fingerprint. */
  | 'reuse'
  /** It is the answer: complete and unexpired, or in flight under a live lease. */
  | 'stands';

/** The verdict on `row` for a claim of `fingerprint` at `at` (milliseconds). */
export function verdictOn(row: RecordRow, fingerprint: string, at: number): RowVerdict {
  if (row.state === 'in_flight') {
    // An in-flight claim past its whole expiry (its process died long ago) counts as
    // absent, as purge would make it; before that, only the same request takes it over (S6).
    const leaseOver = row.lease_expires_ms !== null && row.lease_expires_ms <= at;
    if (leaseOver && (row.fingerprint === fingerprint || row.expires_ms <= at)) {
      return 'take-over';
    }
    return 'stands';
  }
  return row.expires_ms <= at ? 'reuse' : 'stands';
}
