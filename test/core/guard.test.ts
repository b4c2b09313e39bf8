import { describe, expect, it } from 'vitest';
import { createGuard, IdempotencyError, type IdempotencyStore } from '../../src/index.js';

/** A store that fails every call, as a dead database does. */
const deadStore: IdempotencyStore<never> = {
  dialect: 'dead',
  claim: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
  read: () => Promise.reject(new Error('down')),
  transaction: () => Promise.reject(new Error('down')),
  complete: () => Promise.reject(new Error('down')),
  release: () => Promise.reject(new Error('down')),
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
    expect(() => createGuard({ store: deadStore, lease: 0 })).toThrow(/`lease` must be a positive/);
    expect(() => createGuard({ store: deadStore, retention: -1 })).toThrow(/`retention`/);
    expect(() => createGuard({ store: deadStore, wait: -5 })).toThrow(/`wait`/);
    expect(() => createGuard({} as never)).toThrow(/`store` option is required/);
  });

  it('documents its defaults: 24 h retention, 30 s lease, no wait, 1 MiB cap', () => {
    const { options } = createGuard({ store: deadStore });
    expect(options).toMatchObject({
      retention: 86_400_000,
      lease: 30_000,
      wait: 0,
      maxResultBytes: 1_048_576,
    });
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

  it('S15: a transaction that cannot begin answers 503 and never runs the work', async () => {
    let ran = false;
    const store: IdempotencyStore<never> = {
      ...deadStore,
      claim: async () => ({ status: 'claimed', token: 't', takenOver: false }),
    };
    const error = await createGuard({ store })
      .run(call(async () => (ran = true)))
      .catch((e) => e);
    expect(error.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(ran).toBe(false);
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
