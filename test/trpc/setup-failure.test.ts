/**
 * A store that is not set up, behind tRPC (SPEC S15, S19, S25, S26): a flood of guarded calls
 * all get `SERVICE_UNAVAILABLE` (503) with nothing of the store's reason in it, and the
 * server's log (tRPC has no logger: the guard's default, `console.error`) gets that reason
 * (what is missing, and the fix) once, without a raw key; the `failed` events and the errors
 * the adapter's `onError` sees carry it too.
 */
import { randomUUID } from 'node:crypto';
import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGuard, type Guard, type GuardEvent } from '../../src/index.js';
import { idempotency, idempotencyErrorFormatter } from '../../src/trpc/index.js';
import { postgresAvailability } from '../support/postgres.js';
import { UNSET_STORES, type UnsetStore } from '../support/unset-stores.js';

const pg = await postgresAvailability();

/** What the adapter's `onError` found at `error.cause.cause.setupReason`, per call. */
type Seen = unknown[];

function paymentsHandler(guard: Guard<unknown>, seen: Seen) {
  const t = initTRPC.context<{ req: Request }>().create({
    errorFormatter: idempotencyErrorFormatter,
  });
  const router = t.router({
    pay: t.procedure
      .input((raw) => raw as { amount: number; idempotencyKey: string })
      .concat(idempotency({ guard, scope: () => 'acct_1' }))
      .mutation(({ input }) => input.amount),
  });
  return (key: string) =>
    fetchRequestHandler({
      endpoint: '/trpc',
      router,
      req: new Request('http://localhost/trpc/pay', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 5, idempotencyKey: key }),
      }),
      createContext: ({ req }) => ({ req }),
      onError: ({ error }) => {
        seen.push((error.cause?.cause as { setupReason?: string } | undefined)?.setupReason);
      },
    }).then(async (response) => ({ status: response.status, text: await response.text() }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

for (const kind of UNSET_STORES) {
  const skip = kind.needsServer && !pg.realPostgres;
  describe.skipIf(skip)(
    `tRPC on ${kind.name}, not set up${skip ? ` (${pg.skipReason})` : ''}`,
    () => {
      let unset: UnsetStore;
      beforeAll(async () => {
        unset = await kind.open();
      });
      afterAll(() => unset?.close());

      it('S15/S25/S26: concurrent calls all get 503 without the reason; the log gets the reason once, without a raw key; the events carry it; after the fix the next one runs', async () => {
        const log = vi.spyOn(console, 'error').mockImplementation(() => {});
        const events: GuardEvent[] = [];
        const guard = createGuard({ store: unset.store, onEvent: (event) => events.push(event) });
        const seen: Seen = [];
        const pay = paymentsHandler(guard, seen);
        const keys = Array.from({ length: 6 }, () => `order-${randomUUID()}`);

        const answers = await Promise.all(keys.map(pay));

        for (const answer of answers) {
          expect(answer.status).toBe(503);
          const { error } = JSON.parse(answer.text);
          expect(error.data.code).toBe('SERVICE_UNAVAILABLE');
          expect(error.data.idempotencyCode).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
          expect(answer.text).not.toMatch(unset.missing);
          expect(answer.text).not.toMatch(/migrat|records table|StoreFailure/i);
        }
        expect(log).toHaveBeenCalledOnce();
        expect(String(log.mock.calls[0]?.[0])).toMatch(unset.missing);
        const failed = events.filter((event) => event.type === 'failed');
        expect(failed).toHaveLength(keys.length);
        for (const event of failed) expect(event.detail).toMatch(unset.missing);
        expect(seen).toHaveLength(keys.length);
        for (const reason of seen) expect(reason).toMatch(unset.missing);
        const observed = JSON.stringify([log.mock.calls, events, seen]);
        for (const key of keys) expect(observed).not.toContain(key);

        await unset.fix();
        const fixed = await pay(`order-${randomUUID()}`);
        expect(fixed.status).toBe(200);
        expect(log).toHaveBeenCalledOnce();
      });
    },
  );
}
