/**
 * Guarded calls nested in guarded work (SPEC S24), on every store: a nested call joins the
 * outer transaction, so it needs no connection of its own and never waits for one. Its record
 * commits or rolls back with the outer work; inside it, it is a savepoint, so a failure the
 * outer work catches undoes only the nested call.
 *
 * The runners open these rules' databases with `NESTING_CONNECTIONS` connections, and the
 * first rule takes them all. Each rule is bounded well below the test timeout, so a call that
 * hangs fails with its own message.
 */
import { expect, it } from 'vitest';
import type { Guard } from '../../src/index.js';
import { deferred } from '../support/deferred.js';
import { type Conformance, codeOf } from './context.js';

/** The pool size of these rules: small, so that three outer calls take every connection. */
export const NESTING_CONNECTIONS = 3;

/** Longer than any rule needs, and far below the test timeout. */
const HANG_MS = 5_000;

export function describeNestingRules<Tx>(ctx: Conformance<Tx>): void {
  const { guardFor, call } = ctx;

  /** An outer call that writes its row and makes one nested call writing its own. */
  const outerWithNested = (guard: Guard<Tx>, outerKey: string, innerKey: string) =>
    guard.run(
      call(outerKey, async (tx) => {
        await ctx.insertPayment(tx, outerKey);
        const inner = await guard.run(
          call(innerKey, async (innerTx) => {
            await ctx.insertPayment(innerTx, innerKey);
            return innerKey;
          }),
        );
        return `${outerKey}+${inner.value}`;
      }),
    );

  /** A key's row is its complete record; a key in flight or free has none. */
  const stateOf = async (key: string) =>
    (await ctx.store.read({ scope: 'acct_1', key })) ? 'complete' : undefined;

  it('S24: with every connection held by an outer call, nested guarded calls still complete', async () => {
    const guard = guardFor();
    const outers = Array.from({ length: NESTING_CONNECTIONS }, (_, i) =>
      outerWithNested(guard, `outer-${i}`, `inner-${i}`),
    );
    const results = await bounded(Promise.all(outers), 'outer calls with nested calls');
    expect(results).toEqual(
      outers.map((_, i) => ({ value: `outer-${i}+inner-${i}`, replayed: false })),
    );
    expect(await ctx.countPayments()).toBe(2 * NESTING_CONNECTIONS);
    for (let i = 0; i < NESTING_CONNECTIONS; i++) {
      expect(await stateOf(`inner-${i}`)).toBe('complete');
    }
  });

  it('S24/S9: a nested key called twice in one outer work runs once, and a retry of the outer call replays without running either work', async () => {
    const guard = guardFor();
    const runs = { outer: 0, inner: 0 };
    const outer = () =>
      guard.run(
        call('outer', async (tx) => {
          runs.outer++;
          await ctx.insertPayment(tx, 'outer');
          const nested = () =>
            guard.run(
              call('inner', async (innerTx) => {
                runs.inner++;
                await ctx.insertPayment(innerTx, 'inner');
                return 'inner';
              }),
            );
          const first = await nested();
          const second = await nested();
          return [first.replayed, second.replayed];
        }),
      );
    expect(await bounded(outer(), 'the outer call')).toEqual({
      value: [false, true],
      replayed: false,
    });
    expect(await bounded(outer(), 'its retry')).toEqual({ value: [false, true], replayed: true });
    expect(runs).toEqual({ outer: 1, inner: 1 });
    expect(await ctx.countPayments()).toBe(2);
  });

  it('S24/S6: a nested key reused with another fingerprint is 422, in the outer work and after it', async () => {
    const guard = guardFor();
    const result = await bounded(
      guard.run(
        call('outer', async () => {
          await guard.run(call('inner', async () => 'first'));
          return codeOf(guard.run(call('inner', async () => 'other', { fingerprint: 'fp-b' })));
        }),
      ),
      'the outer call',
    );
    expect(result.value).toBe('IDEMPOTENCY_KEY_REUSED');
    await expect(
      codeOf(guard.run(call('inner', async () => 'other', { fingerprint: 'fp-b' }))),
    ).resolves.toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await guard.run(call('inner', async () => 'never'))).toEqual({
      value: 'first',
      replayed: true,
    });
  });

  it('S24/S12: a nested failure the outer work lets through rolls the outer call back with it; a retry runs both afresh', async () => {
    const guard = guardFor();
    let fail = true;
    const outer = () =>
      guard.run(
        call('outer', async (tx) => {
          await ctx.insertPayment(tx, 'outer');
          await guard.run(
            call('inner', async (innerTx) => {
              await ctx.insertPayment(innerTx, 'inner');
              if (fail) throw new Error('declined');
              return 'inner';
            }),
          );
          return 'outer';
        }),
      );
    await expect(bounded(outer(), 'the outer call')).rejects.toThrow('declined');
    expect(await ctx.countPayments()).toBe(0);
    expect(await stateOf('outer')).toBeUndefined();
    expect(await stateOf('inner')).toBeUndefined();
    fail = false;
    expect(await bounded(outer(), 'its retry')).toEqual({ value: 'outer', replayed: false });
    expect(await ctx.countPayments()).toBe(2);
  });

  it('S24/S8: a nested call that completed rolls back when the outer work fails after it', async () => {
    const guard = guardFor();
    await expect(
      bounded(
        guard.run(
          call('outer', async (tx) => {
            await guard.run(
              call('inner', async (innerTx) => {
                await ctx.insertPayment(innerTx, 'inner');
                return 'inner';
              }),
            );
            await ctx.insertPayment(tx, 'outer');
            throw new Error('outer failed');
          }),
        ),
        'the outer call',
      ),
    ).rejects.toThrow('outer failed');
    expect(await ctx.countPayments()).toBe(0);
    expect(await stateOf('inner')).toBeUndefined();
  });

  it('S24/S12: a nested failure the outer work catches undoes only the nested call and frees its key; the outer call commits', async () => {
    const guard = guardFor();
    const result = await bounded(
      guard.run(
        call('outer', async (tx) => {
          await ctx.insertPayment(tx, 'outer');
          const inner = await guard
            .run(
              call('inner', async (innerTx) => {
                await ctx.insertPayment(innerTx, 'inner');
                throw new Error('declined');
              }),
            )
            .catch((error: Error) => error.message);
          return `outer+${inner}`;
        }),
      ),
      'the outer call',
    );
    expect(result).toEqual({ value: 'outer+declined', replayed: false });
    expect(await ctx.countPayments()).toBe(1);
    expect(await stateOf('outer')).toBe('complete');
    expect(await stateOf('inner')).toBeUndefined();
    // Freed: the nested key runs afresh.
    expect(await guard.run(call('inner', async () => 'again'))).toEqual({
      value: 'again',
      replayed: false,
    });
  });

  it('S24/S10: a nested call with the key of the call running it answers 409 at once', async () => {
    const guard = guardFor();
    let ran = false;
    const result = await bounded(
      guard.run(
        call('outer', async () => codeOf(guard.run(call('outer', async () => (ran = true))))),
      ),
      'the outer call',
    );
    expect(result.value).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(ran).toBe(false);
  });

  it('S24: nested calls fired at once in one outer work each run once and commit with it', async () => {
    const guard = guardFor();
    const keys = ['inner-a', 'inner-b', 'inner-c'];
    const result = await bounded(
      guard.run(
        call('outer', async () => {
          const inners = await Promise.all(
            keys.map((key) =>
              guard.run(
                call(key, async (tx) => {
                  await ctx.insertPayment(tx, key);
                  return key;
                }),
              ),
            ),
          );
          return inners.map((inner) => inner.value);
        }),
      ),
      'the outer call',
    );
    expect(result).toEqual({ value: keys, replayed: false });
    expect(await ctx.countPayments()).toBe(keys.length);
    for (const key of keys) expect(await stateOf(key)).toBe('complete');
  });

  it.skipIf(Boolean(ctx.target.skipMultiConnection))(
    `S24/S10: a nested call whose key another request runs answers 409 at once${ctx.target.skipMultiConnection ? ` (skipped: ${ctx.target.skipMultiConnection})` : ''}`,
    async () => {
      const guard = guardFor();
      const started = deferred();
      const release = deferred();
      const original = guard.run(
        call('inner', async (tx) => {
          await ctx.insertPayment(tx, 'original');
          started.resolve();
          await release.promise;
          return 'original';
        }),
      );
      await bounded(started.promise, 'the original call');
      const result = await bounded(
        guard.run(call('outer', async () => codeOf(guard.run(call('inner', async () => 'x'))))),
        'the outer call',
      );
      release.resolve();
      expect(result.value).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(await bounded(original, 'the original call')).toEqual({
        value: 'original',
        replayed: false,
      });
    },
  );
}

/** `promise`, or a failure that names what hung once `HANG_MS` has passed (S24: never hang). */
async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not settle within ${HANG_MS} ms: it hangs`)),
      HANG_MS,
    );
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}
