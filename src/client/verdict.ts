/**
 * What one attempt's outcome means for the next (SPEC S29), decided here for every client:
 * retry on network errors (the outcome is unknown, and the same key makes a retry safe),
 * on 409 IDEMPOTENCY_KEY_IN_USE after its Retry-After, and on 503; never on anything else
 * (400, 422, the mutation's own errors), which would only get the same answer again.
 */

export type RetryReason = 'network' | 'in-use' | 'unavailable';

export type Verdict =
  | { retry: false }
  | { retry: true; reason: RetryReason /** From `Retry-After`. */; retryAfterMs?: number };

/** What a client saw of one HTTP answer. */
export interface Answer {
  status: number;
  headers?: Pick<Headers, 'get'> | undefined;
  /** Error codes found in the body: GraphQL `extensions.code`, tRPC `data.idempotencyCode`. */
  codes?: readonly string[];
}

export const IN_USE = 'IDEMPOTENCY_KEY_IN_USE';
export const STORE_UNAVAILABLE = 'IDEMPOTENCY_STORE_UNAVAILABLE';

const NO_RETRY: Verdict = { retry: false };

/** No answer arrived (connection refused or reset, response lost): retry with the same key. */
export function networkVerdict(): Verdict {
  return { retry: true, reason: 'network' };
}

export function answerVerdict(answer: Answer): Verdict {
  const codes = answer.codes ?? [];
  const retryAfterMs = readRetryAfter(answer.headers);
  const after = retryAfterMs === undefined ? {} : { retryAfterMs };
  // Another request holds the key. A 409 that names no code but carries Retry-After is the
  // same answer from a server whose error formatter hides the code.
  if (codes.includes(IN_USE) || (answer.status === 409 && retryAfterMs !== undefined)) {
    return { retry: true, reason: 'in-use', ...after };
  }
  if (answer.status === 503 || codes.includes(STORE_UNAVAILABLE)) {
    return { retry: true, reason: 'unavailable', ...after };
  }
  return NO_RETRY;
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; undefined when absent. */
export function readRetryAfter(headers: Pick<Headers, 'get'> | undefined): number | undefined {
  const raw = headers?.get('retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * The error codes in a parsed response body, wherever the two surfaces put them: GraphQL
 * `errors[].extensions.code`, tRPC `error.data.idempotencyCode` (also under superjson's
 * `json`), a plain `{ code }` body, and each element of a batch.
 */
export function codesInBody(body: unknown): string[] {
  const codes: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 4 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const name of ['code', 'idempotencyCode']) {
      const code = record[name];
      if (typeof code === 'string') codes.push(code);
    }
    for (const name of ['errors', 'error', 'extensions', 'data', 'json']) {
      visit(record[name], depth + 1);
    }
  };
  visit(body, 0);
  return codes;
}
