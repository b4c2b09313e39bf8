/**
 * The claim's answer (SPEC S7, S22, S26): `<table>_begin` answers with one JSON value as text
 * (drizzle/postgres/0000_init.sql says why), which the store reads the same way on every
 * driver. The answer is read as it was written; one of another shape is an error that says
 * what to do, and never repeats the answer (it may hold a stored result).
 */
import { describe, expect, it } from 'vitest';
import { BEGIN_ANSWER, beginRowOf } from '../../src/postgres/begin-answer.js';

describe("the begin function's answer, read", () => {
  it('S7: reads the status, the replace flag and the record that stands, numbers and text as written', () => {
    const record = {
      status: 'exists',
      replace: false,
      fingerprint: 'f',
      operation: 'pay',
      outcome: 'committed',
      result: '{"id":1,"note":"quote \\" and \\\\ and é"}',
      expires_ms: 1796179200123.5,
      created_ms: 1796092800000.25,
      read_ms: 1796092800001,
    };
    expect(beginRowOf({ [BEGIN_ANSWER]: JSON.stringify(record) })).toEqual(record);
    expect(beginRowOf({ [BEGIN_ANSWER]: '{"status":"claimed","replace":false}' })).toEqual({
      status: 'claimed',
      replace: false,
    });
  });

  it('no row, or a row without the answer: undefined (the caller says which statement did not answer)', () => {
    expect(beginRowOf(undefined)).toBeUndefined();
    expect(beginRowOf({ other: 1 })).toBeUndefined();
  });

  it('S22/S26: an answer of another shape is an error that says what to do and does not repeat it', () => {
    for (const answer of ['(claimed,f)', '"claimed"', '{"replace":false}', 'null', 42, null]) {
      let thrown: unknown;
      try {
        beginRowOf({ [BEGIN_ANSWER]: answer });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(Error);
      const { message } = thrown as Error;
      expect(message).toMatch(/this version's functions.*postgresFunctionsSql/);
      expect(message).not.toContain('claimed');
    }
  });
});
