import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  createGuard,
  type GuardEvent,
  IdempotencyError,
  type IdempotencyStore,
  MAX_OPERATION_NAME,
  retryAfterSeconds,
  type StoredRecord,
  StoreFailure,
} from '../../src/index.js';
import type { ClaimRequest } from '../../src/store/index.js';

/** A store that fails every call, as a dead database does. */
const deadStore: IdempotencyStore<never> = {
  claimAndRun: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
  purge: () => Promise.reject(new Error('down')),
};

const call = (work: () => Promise<unknown>) => ({
  scope: 's',
  key: 'k',
  fingerprint: 'f',
  operation: 'op',
  work,
});

describe('createGuard', () => {
  it('validates its options with clear errors', () => {
    expect(() => createGuard({ store: deadStore, retention: 0 })).toThrow(
      /`retention` must be a positive/,
    );
    expect(() => createGuard({ store: deadStore, retention: -1 })).toThrow(/`retention`/);
    expect(() => createGuard({ store: deadStore, wait: -5 })).toThrow(/`wait`/);
    expect(() => createGuard({} as never)).toThrow(/`store` option is required/);
  });

  it('documents its defaults: 24 h retention, no wait, 1 MiB result and input caps, 128 levels', () => {
    const { options } = createGuard({ store: deadStore });
    expect(options).toMatchObject({
      retention: 86_400_000,
      wait: 0,
      maxResultBytes: 1_048_576,
      maxInputBytes: 1_048_576,
      maxInputDepth: 128,
    });
    expect(() => createGuard({ store: deadStore, maxInputDepth: 0 })).toThrow(/`maxInputDepth`/);
  });

  it('S15: a claim that fails answers 503 IDEMPOTENCY_STORE_UNAVAILABLE and never runs the work', async () => {
    let ran = false;
    const error = await createGuard({ store: deadStore })
      .run(call(async () => (ran = true)))
      .catch((e) => e);
    expect(IdempotencyError.is(error)).toBe(true);
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(error.status).toBe(503);
    expect(error.cause).toBeInstanceOf(Error);
    expect(ran).toBe(false);
  });

  it("S15: a store that fails after the work ran (its commit, say) answers 503, not the work's value", async () => {
    let ran = false;
    const store: IdempotencyStore<never> = {
      ...deadStore,
      claimAndRun: async (_request, work) => {
        await work(undefined as never);
        throw new Error('connection terminated during COMMIT');
      },
    };
    const error = await createGuard({ store })
      .run(call(async () => (ran = true)))
      .catch((e) => e);
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(ran).toBe(true);
  });

  it('S25: an onEvent handler that throws does not change the outcome', async () => {
    const guard = createGuard({
      store: deadStore,
      onEvent: () => {
        throw new Error('observer bug');
      },
    });
    await expect(guard.run(call(async () => 1))).rejects.toMatchObject({
      code: 'IDEMPOTENCY_STORE_UNAVAILABLE',
    });
  });

  it('S26: error messages carry a key hash, never the key', async () => {
    const error = await createGuard({ store: deadStore })
      .run({ ...call(async () => 1), key: 'very-secret-key' })
      .catch((e) => e);
    expect(error.message).not.toContain('very-secret-key');
    expect(error.message).toContain(error.keyHash);
  });
});

/** A store whose claim always finds `record` standing; the work never runs. */
function storeWith(
  record: (now: Date) => Partial<StoredRecord>,
  claims: ClaimRequest[] = [],
): IdempotencyStore<never> {
  return {
    ...deadStore,
    claimAndRun: async (request) => {
      claims.push(request);
      const now = new Date('2026-03-01T12:00:00Z');
      return {
        status: 'exists',
        record: {
          scope: request.scope,
          key: request.key,
          fingerprint: request.fingerprint,
          operation: request.operation,
          outcome: 'committed',
          result: 'null',
          expiresAt: new Date(now.getTime() + 86_400_000),
          createdAt: now,
          readAt: now,
          ...record(now),
        },
      };
    },
  };
}

/** A store whose claim always finds the key held by a running transaction of this request. */
function heldFor(runningMs: number | undefined): IdempotencyStore<never> {
  return {
    ...deadStore,
    claimAndRun: async () => ({
      status: 'in_flight',
      sameRequest: true,
      ...(runningMs === undefined ? {} : { runningMs }),
    }),
  };
}

const at = (now: Date, ms: number) => new Date(now.getTime() + ms);

describe('S10: Retry-After tells a duplicate when the original is likely done', () => {
  const cases = [
    // [ran so far (ms), or unknown, Retry-After]
    [0, 1],
    [300, 1],
    [2_000, 2],
    [2_001, 3],
    [9_500, 10],
    [31_000, 31],
    [undefined, 1],
  ] as const;
  for (const [ranMs, expected] of cases) {
    it(`S10: an original that has run ${ranMs ?? 'an unknown time'} ${ranMs === undefined ? '' : 'ms '}gives Retry-After: ${expected}`, async () => {
      const error = await createGuard({ store: heldFor(ranMs) })
        .run(call(async () => 1))
        .catch((e) => e);
      expect(error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(error.retryAfterSeconds).toBe(expected);
    });
  }

  it('computes max(1, ceil(ran so far)) in one named function, 1 when the store cannot tell', () => {
    expect(retryAfterSeconds(2_000)).toBe(2);
    expect(retryAfterSeconds(60_000)).toBe(60);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(undefined)).toBe(1);
  });
});

describe('S14: an expired complete record is never replayed', () => {
  it('S14: a complete record past expiresAt (store clock) answers 409 IN_USE, not the stored result', async () => {
    const store = storeWith((now) => ({
      result: JSON.stringify({ stale: true }),
      createdAt: at(now, -90_000_000),
      expiresAt: at(now, -1),
    }));
    const events: string[] = [];
    const error = await createGuard({ store, onEvent: (e) => events.push(e.type) })
      .run(call(async () => 1))
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', status: 409 });
    expect(events).not.toContain('replayed');
  });

  it('S14: with `wait`, the guard keeps waiting and runs the work once the record is replaced', async () => {
    let claims = 0;
    const expired = storeWith((now) => ({
      result: JSON.stringify({ stale: true }),
      expiresAt: at(now, -1),
    }));
    const store: IdempotencyStore<never> = {
      ...expired,
      claimAndRun: async (request, work) => {
        claims++;
        if (claims < 3) return expired.claimAndRun(request, work);
        const { value } = await work(undefined as never);
        return { status: 'done', value };
      },
    };
    const result = await createGuard({ store, wait: 2_000 }).run(
      call(async () => ({ fresh: true })),
    );
    expect(result).toEqual({ value: { fresh: true }, replayed: false });
    expect(claims).toBe(3);
  });

  it('S9: a complete record within its retention is replayed', async () => {
    const store = storeWith((now) => ({
      result: JSON.stringify({ stored: true }),
      expiresAt: at(now, 1),
    }));
    const result = await createGuard({ store }).run(call(async () => ({ fresh: true })));
    expect(result).toEqual({ value: { stored: true }, replayed: true });
  });
});

describe('S25: operation names are bounded in records and events', () => {
  it(`stores and reports at most ${MAX_OPERATION_NAME} characters of a huge operation name, with a marker`, async () => {
    const claims: ClaimRequest[] = [];
    const events: GuardEvent[] = [];
    const store = storeWith(() => ({}), claims);
    const name = `Pay${'x'.repeat(2_000_000)}`;
    await createGuard({ store, onEvent: (e) => events.push(e) })
      .run({ ...call(async () => 1), operation: name })
      .catch(() => undefined);
    const stored = claims[0]!.operation;
    expect(stored.length).toBeLessThan(MAX_OPERATION_NAME + 40);
    expect(stored.startsWith(name.slice(0, MAX_OPERATION_NAME))).toBe(true);
    expect(stored).toContain(`(${name.length} chars)`);
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(event.operation).toBe(stored);
  });

  it('keeps short names as they are', async () => {
    const claims: ClaimRequest[] = [];
    await createGuard({ store: storeWith(() => ({}), claims) })
      .run({ ...call(async () => 1), operation: 'CreatePayment' })
      .catch(() => undefined);
    expect(claims[0]!.operation).toBe('CreatePayment');
  });
});

describe('S26: a store error on cause carries no raw key', () => {
  it('S26: keeps the SQLSTATE and class, drops the parameters and scrubs the key', async () => {
    const key = 'raw-key-7f3a9c';
    const driver = Object.assign(new Error(`duplicate key value (scope, key)=(s, ${key})`), {
      code: '23505',
      detail: `Key (scope, key)=(s, ${key}) already exists.`,
    });
    const drizzle = new Error(
      `Failed query: insert into "idempotency_records" values ($1, $2)\nparams: s,${key}`,
      { cause: driver },
    );
    const store: IdempotencyStore<never> = {
      ...deadStore,
      claimAndRun: () => Promise.reject(drizzle),
    };
    const error = await createGuard({ store })
      .run({ ...call(async () => 1), key })
      .catch((e) => e);
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(StoreFailure.is(error.cause)).toBe(true);
    expect(error.cause.code).toBe('23505');
    expect(error.cause.message).toContain('Failed query: insert into "idempotency_records"');
    expect(error.cause.message).not.toContain('params');
    const printed = `${inspect(error, { depth: Number.POSITIVE_INFINITY })}\n${String(error)}\n${error.cause.stack}`;
    expect(printed).not.toContain(key);
    expect(printed).not.toContain('already exists');
  });
});
