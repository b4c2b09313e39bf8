/**
 * The one walk of an error's cause chain every Postgres error reader uses (src/postgres/
 * error-chain.ts): the driver's SQLSTATE is found under Drizzle's wrapper, and a chain whose
 * cause points back up ends instead of looping (S15: a failing store must still answer 503).
 */
import { describe, expect, it } from 'vitest';
import { causeChain, driverErrorOf, hasCode } from '../../src/postgres/error-chain.js';
import { explainMissingFunctions } from '../../src/postgres/functions.js';

function driverError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('the cause chain of a store error', () => {
  it('finds the driver code and error under a wrapper, outermost first', () => {
    const driver = driverError('could not serialize access', '40001');
    const wrapped = new Error('Failed query: select ...', { cause: driver });
    expect(causeChain(wrapped)).toEqual([wrapped, driver]);
    expect(hasCode(wrapped, '40P01', '40001')).toBe(true);
    expect(hasCode(wrapped, '23505')).toBe(false);
    expect(driverErrorOf(wrapped)).toBe(driver);
  });

  it('S15: a cause that points back up ends the walk; the missing-function check answers', () => {
    const driver = driverError('function idempotency_records_begin(...) does not exist', '42883');
    const wrapper = new Error('Failed query', { cause: driver });
    (driver as { cause?: unknown }).cause = wrapper;

    expect(causeChain(wrapper)).toEqual([wrapper, driver]);
    const explained = explainMissingFunctions(wrapper, 'public', 'idempotency_records');
    expect(String(explained)).toContain('idempotency_records_begin');
    // A cycle without the code is returned as it came, also without looping.
    const loop = new Error('loop');
    (loop as { cause?: unknown }).cause = loop;
    expect(explainMissingFunctions(loop, 'public', 'idempotency_records')).toBe(loop);
  });
});
