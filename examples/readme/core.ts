import { createGuard, fingerprint, IdempotencyError, parseKeyHeader } from 'mutation-guard';
import { openSqlite, sqliteStore } from 'mutation-guard/sqlite';

const guard = createGuard({
  store: sqliteStore(openSqlite(':memory:')),
  // One event per decision; keys appear only as a short hash.
  onEvent: (event) => {
    if (event.type === 'failed')
      console.warn('idempotency', event.type, event.keyHash, event.reason);
  },
});

/** Any other HTTP framework: a handler for POST /refunds, written against the core. */
export async function refundHandler(request: Request, accountId: string): Promise<Response> {
  const body = (await request.json()) as { paymentId: string; amount: number };
  try {
    const key = parseKeyHeader(request.headers.get('idempotency-key'));
    if (key === undefined)
      return Response.json({ error: 'Idempotency-Key required' }, { status: 400 });
    const { value, replayed } = await guard.run({
      scope: accountId,
      key,
      fingerprint: fingerprint({ surface: 'rest', operation: 'POST /refunds', input: body }),
      operation: 'POST /refunds',
      work: async (tx) => {
        void tx; // write your rows through `tx` (a Drizzle database inside the transaction)
        return { refundId: `re_${body.paymentId}`, amount: body.amount };
      },
    });
    return Response.json(value, { headers: replayed ? { 'Idempotent-Replayed': 'true' } : {} });
  } catch (error) {
    if (!IdempotencyError.is(error)) throw error;
    const headers: Record<string, string> = {};
    if (error.retryAfterSeconds) headers['Retry-After'] = String(error.retryAfterSeconds);
    return Response.json(
      { type: error.type, title: error.title, code: error.code },
      { status: error.status, headers },
    );
  }
}

/**
 * Expired records are never replayed but stay in the table until purged: run this on a
 * schedule (a cron job, or an unref'd interval as here).
 */
export function schedulePurge(everyMs = 10 * 60 * 1000): NodeJS.Timeout {
  const timer = setInterval(() => {
    guard.purge({ batchSize: 1000 }).catch((error) => console.error('purge failed', error));
  }, everyMs);
  timer.unref();
  return timer;
}
