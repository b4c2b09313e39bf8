import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { describe, expect, it } from 'vitest';
import {
  type Guard,
  IDEMPOTENCY_ERRORS,
  IdempotencyError,
  type IdempotencyErrorCode,
} from '../../src/index.js';
import { idempotencyErrorData, toTRPCError } from '../../src/trpc/index.js';
import { createApp } from './app.js';
import { rawMutation, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

describe('error mapping (SPEC S19)', () => {
  it.each(Object.keys(IDEMPOTENCY_ERRORS) as IdempotencyErrorCode[])(
    'S19: %s answers with its SPEC HTTP status and keeps the SPEC error as cause',
    (code) => {
      const original = new IdempotencyError(code, 'message', {
        retryAfterSeconds: 3,
        keyHash: 'abc123',
      });
      const mapped = toTRPCError(original);

      expect(getHTTPStatusCodeFromError(mapped)).toBe(IDEMPOTENCY_ERRORS[code].status);
      expect(mapped.cause).toBe(original);
      expect(idempotencyErrorData(mapped)).toEqual({
        idempotencyCode: code,
        idempotencyType: original.type,
        idempotencyTitle: original.title,
        idempotencyStatus: IDEMPOTENCY_ERRORS[code].status,
        idempotencyKeyHash: 'abc123',
        retryAfterSeconds: 3,
      });
    },
  );

  it('S19: an error of status 413 (an input over the fingerprint bounds) answers PAYLOAD_TOO_LARGE', () => {
    // The code is the core's to add; the mapping goes by status, so it needs no change here.
    const tooLarge = Object.assign(new IdempotencyError('IDEMPOTENCY_KEY_INVALID', 'too large'), {
      code: 'IDEMPOTENCY_INPUT_TOO_LARGE',
      status: 413,
    });
    const mapped = toTRPCError(tooLarge);
    expect(mapped.code).toBe('PAYLOAD_TOO_LARGE');
    expect(getHTTPStatusCodeFromError(mapped)).toBe(413);
    expect(idempotencyErrorData(mapped)).toMatchObject({
      idempotencyCode: 'IDEMPOTENCY_INPUT_TOO_LARGE',
      idempotencyStatus: 413,
    });
  });

  it('S19: other errors carry no idempotency data, so a custom formatter can spread it safely', () => {
    expect(idempotencyErrorData(new TRPCError({ code: 'NOT_FOUND' }))).toBeUndefined();
    expect({ ...idempotencyErrorData(new Error('x')) }).toEqual({});
  });
});

/** A guard that answers every call with `error`, as a busy store would. */
function failingGuard(error: IdempotencyError): Guard<never> {
  return {
    run: () => Promise.reject(error),
    purge: () => Promise.resolve(0),
    options: {} as Guard<never>['options'],
  };
}

describe.each(['standalone', 'fetch'] as const)(
  'Retry-After over HTTP, %s adapter (SPEC S10, S19)',
  (adapter) => {
    it("S10/S19: the Retry-After header and data.retryAfterSeconds are exactly the guard's retryAfterSeconds", async () => {
      const busy = new IdempotencyError('IDEMPOTENCY_KEY_IN_USE', 'Key abc123 is in use.', {
        keyHash: 'abc123',
        retryAfterSeconds: 7,
      });
      const app = createApp(failingGuard(busy), sqliteGuard().ledger as never);
      const served = await serve(app.router, adapter);
      try {
        const response = await rawMutation(
          served.url,
          'pay',
          { amount: 1 },
          {
            'Idempotency-Key': 'k-busy',
          },
        );
        expect(response.status).toBe(409);
        expect(response.headers.get('retry-after')).toBe('7');
        const body = (await response.json()) as { error: { json: { data: object } } };
        expect(body.error.json.data).toMatchObject({
          code: 'CONFLICT',
          httpStatus: 409,
          idempotencyCode: 'IDEMPOTENCY_KEY_IN_USE',
          idempotencyType: 'urn:mutation-guard:error:key-in-use',
          idempotencyTitle: 'Idempotency key in use',
          idempotencyStatus: 409,
          idempotencyKeyHash: 'abc123',
          retryAfterSeconds: 7,
        });
        expect(app.runs.pay).toBe(0);
      } finally {
        await served.close();
      }
    });
  },
);
