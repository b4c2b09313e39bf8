/**
 * The store's own autocommit statements under a strict server default (SPEC S24).
 *
 * `read` and `purge` each run as a statement of its own, in an implicit transaction at the
 * server's `default_transaction_isolation`. Under SERIALIZABLE or REPEATABLE READ, a purge
 * whose DELETE meets a row that a concurrent transaction changed after its snapshot (a claim
 * replacing an expired record) fails with SQLSTATE 40001, which would reach the caller as an
 * error. Wrapping each in a READ COMMITTED transaction would cost a BEGIN and a COMMIT round
 * trip per statement; instead such a failure is retried: the statement's transaction was
 * rolled back, so nothing of it happened, and a new attempt takes a new snapshot. Bounded,
 * with a short random pause so that colliding statements spread out.
 */
import { hasCode } from './error-chain.js';

const ATTEMPTS = 8;

/** 40001 serialization_failure, 40P01 deadlock_detected. Drizzle wraps the driver's error. */
export function isSerializationFailure(error: unknown): boolean {
  return hasCode(error, '40001', '40P01');
}

/** Runs one autocommit statement, again on a serialization failure, a few times at most. */
export async function retryingSerializationFailures<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isSerializationFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));
    }
  }
}
