import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { describe, expect, it } from 'vitest';
import {
  IDEMPOTENCY_ERRORS,
  IdempotencyError,
  type IdempotencyErrorCode,
} from '../../src/index.js';
import { idempotencyErrorData, toTRPCError } from '../../src/trpc/index.js';

describe('error mapping (SPEC S19)', () => {
  it.each(Object.keys(IDEMPOTENCY_ERRORS) as IdempotencyErrorCode[])(
    'S19: %s answers with its SPEC HTTP status and keeps the SPEC error as cause',
    (code) => {
      const original = new IdempotencyError(code, 'message', { retryAfterSeconds: 3 });
      const mapped = toTRPCError(original);

      expect(getHTTPStatusCodeFromError(mapped)).toBe(IDEMPOTENCY_ERRORS[code].status);
      expect(mapped.cause).toBe(original);
      expect(idempotencyErrorData(mapped)).toEqual({
        idempotencyCode: code,
        idempotencyType: original.type,
        idempotencyTitle: original.title,
        retryAfterSeconds: 3,
      });
    },
  );

  it('S19: other errors carry no idempotency data, so a custom formatter can spread it safely', () => {
    expect(idempotencyErrorData(new TRPCError({ code: 'NOT_FOUND' }))).toBeUndefined();
    expect({ ...idempotencyErrorData(new Error('x')) }).toEqual({});
  });
});
