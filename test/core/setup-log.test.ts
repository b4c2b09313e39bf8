/**
 * A store that is not set up reaches the operator (SPEC S15, S25, S26): the client still gets
 * 503, and `onSetupError` hears the store's reason once per cause, redacted, however many
 * calls fail at once; the `failed` event carries the same text. An outage is not a setup
 * failure: it is in the event, not in the log.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createGuard,
  type GuardEvent,
  IdempotencyError,
  type IdempotencyStore,
  StoreFailure,
} from '../../src/index.js';
import { StoreSetupError } from '../../src/store/index.js';

const RAW_KEY = 'raw-key-7f3c9d2e-0b1a-4c5d-8e6f';

/** A store whose every claim fails with what `failure()` returns at that moment. */
function failingStore(failure: () => Error): IdempotencyStore<never> {
  const fail = () => Promise.reject(failure());
  return { claimAndRun: fail, purge: fail };
}

const missingTable = (table: string) =>
  new StoreSetupError(`the records table "${table}" does not exist: run the migration.`, {
    cause: new Error(`Failed query: insert ... params: ${RAW_KEY}`),
  });

function call(key = RAW_KEY) {
  return { scope: 's', key, fingerprint: 'f', operation: 'pay', work: async () => 'ran' };
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ran',
    (error: unknown) => (IdempotencyError.is(error) ? error.code : String(error)),
  );

afterEach(() => {
  vi.restoreAllMocks();
});

describe('onSetupError (SPEC S15, S25, S26)', () => {
  it('S15/S25: concurrent calls on a store that is not set up all answer 503; the operator is told once, and every failed event carries the same reason', async () => {
    const told: string[] = [];
    const events: GuardEvent[] = [];
    const guard = createGuard({
      store: failingStore(() => missingTable('payments_keys')),
      onSetupError: (message) => told.push(message),
      onEvent: (event) => events.push(event),
    });
    const codes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => codeOf(guard.run(call(`${RAW_KEY}-${i}`)))),
    );
    expect(codes).toEqual(Array(8).fill('IDEMPOTENCY_STORE_UNAVAILABLE'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(
      /^the records table "payments_keys" does not exist: run the migration\./,
    );
    expect(told[0]).toMatch(/answers 503 IDEMPOTENCY_STORE_UNAVAILABLE/);
    const failed = events.filter((event) => event.type === 'failed');
    expect(failed).toHaveLength(8);
    for (const event of failed) {
      expect(event.reason).toBe('store failed during claim');
      expect(event.detail).toBe(
        'the records table "payments_keys" does not exist: run the migration.',
      );
    }
  });

  it('S15: a different cause is told again, and so is the first once it comes back', async () => {
    const told: string[] = [];
    let table = 'one';
    const guard = createGuard({
      store: failingStore(() => missingTable(table)),
      onSetupError: (message) => told.push(message),
    });
    await codeOf(guard.run(call()));
    await codeOf(guard.run(call()));
    table = 'two';
    await Promise.all([codeOf(guard.run(call())), codeOf(guard.run(call()))]);
    table = 'one';
    await codeOf(guard.run(call()));
    expect(told.map((message) => message.match(/"(\w+)"/)?.[1])).toEqual(['one', 'two', 'one']);
  });

  it('S26: what the operator is told and the event carry no raw key, even when the store put it in its message', async () => {
    const told: string[] = [];
    const events: GuardEvent[] = [];
    const guard = createGuard({
      store: failingStore(
        () => new StoreSetupError(`no table for the claim of ${RAW_KEY} (key "${RAW_KEY}")`),
      ),
      onSetupError: (message, failure) => told.push(message, failure.message, failure.stack ?? ''),
      onEvent: (event) => events.push(event),
    });
    const error = await guard.run(call()).catch((e: unknown) => e);
    expect(IdempotencyError.is(error) && StoreFailure.is(error.cause)).toBe(true);
    expect(told[0]).toContain('no table for the claim of [redacted]');
    const everything = JSON.stringify([told, events, (error as Error).cause]);
    expect(everything).not.toContain(RAW_KEY);
  });

  it('S15/S25: an outage is not a setup failure: nobody is told, the event carries the redacted error', async () => {
    const told = vi.fn();
    const events: GuardEvent[] = [];
    const guard = createGuard({
      store: failingStore(() => new Error(`connect ECONNREFUSED; key ${RAW_KEY}`)),
      onSetupError: told,
      onEvent: (event) => events.push(event),
    });
    expect(await codeOf(guard.run(call()))).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(told).not.toHaveBeenCalled();
    expect(events.find((event) => event.type === 'failed')?.detail).toBe(
      'Error: connect ECONNREFUSED; key [redacted]',
    );
  });

  it("the guard's onSetupError wins over the adapter's; the adapter's over console.error, the default", async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const adapters = vi.fn();
    const store = () => failingStore(() => missingTable('t'));

    const own = vi.fn();
    await codeOf(
      createGuard({ store: store(), onSetupError: own }).run({
        ...call(),
        onSetupError: adapters,
      }),
    );
    expect(own).toHaveBeenCalledOnce();
    expect(adapters).not.toHaveBeenCalled();

    await codeOf(createGuard({ store: store() }).run({ ...call(), onSetupError: adapters }));
    expect(adapters).toHaveBeenCalledOnce();
    expect(consoleError).not.toHaveBeenCalled();

    await codeOf(createGuard({ store: store() }).run(call()));
    expect(consoleError).toHaveBeenCalledOnce();
    expect(consoleError.mock.calls[0]?.[0]).toMatch(/the records table "t" does not exist/);
  });

  it('S15: a handler that throws changes nothing: still 503, still told once', async () => {
    const told = vi.fn(() => {
      throw new Error('logger down');
    });
    const guard = createGuard({ store: failingStore(() => missingTable('t')), onSetupError: told });
    expect(await codeOf(guard.run(call()))).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(await codeOf(guard.run(call()))).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
    expect(told).toHaveBeenCalledOnce();
  });
});
