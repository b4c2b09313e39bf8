/** SPEC S25: what the guard reports through `onEvent`. */
export type GuardEventType =
  /** A fresh claim: the work is about to run. */
  | 'claimed'
  /** The work ran and its result was stored (committed, or a kept final error). */
  | 'completed'
  /** A stored result was returned without running the work. */
  | 'replayed'
  /** Another request holds the key (409). */
  | 'in-use'
  /** The key was used before for a different request (422). */
  | 'reused'
  /** The work failed, rolled back, and the key was freed for a retry. */
  | 'released'
  /** `purge()` deleted expired records. */
  | 'purged'
  /** The store failed, the result was too large, or another request's record came first. */
  | 'failed';

export interface GuardEvent {
  type: GuardEventType;
  /** The operation's name (GraphQL operation or tRPC path); empty for `purged`. */
  operation: string;
  scope?: string;
  /** Short hash of the key (SPEC S26), never the key. Absent for `purged`. */
  keyHash?: string;
  /** Milliseconds since the guard started on this request (or on this purge). */
  durationMs: number;
  /** `purged`: how many records were deleted. */
  count?: number;
  /** `failed`, `released`: the reason, as a short text. */
  reason?: string;
  /**
   * `failed` by the store: its error, redacted (SPEC S26). For a store that is not set up,
   * the text `onSetupError` receives: what is missing and the fix; otherwise the
   * `StoreFailure`'s message.
   */
  detail?: string;
}

export type GuardEventHandler = (event: GuardEvent) => void;
