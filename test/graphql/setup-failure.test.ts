/**
 * A store that is not set up, behind Yoga (SPEC S15, S19, S25, S26): a flood of guarded
 * mutations all get the 503 with nothing of the store's reason in it, and Yoga's own logger
 * prints that reason (what is missing, and the fix) once, without a raw key; the `failed`
 * events carry it too. Once the operator has run the fix, the next mutation runs.
 */
import { randomUUID } from 'node:crypto';
import { createSchema, createYoga, type YogaServerOptions } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotentDirectiveTypeDefs, useIdempotency } from '../../src/graphql/index.js';
import { createGuard, type Guard, type GuardEvent } from '../../src/index.js';
import { postgresAvailability } from '../support/postgres.js';
import { UNSET_STORES, type UnsetStore } from '../support/unset-stores.js';

const pg = await postgresAvailability();

/** A Yoga logger that keeps what it is given. */
function capturingLogger() {
  const lines: { level: string; args: unknown[] }[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      lines.push({ level, args });
  return {
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    lines,
    errors: () => lines.filter((line) => line.level === 'error').map((line) => String(line.args)),
  };
}

function paymentsYoga(
  guard: Guard<unknown>,
  logging: YogaServerOptions<object, object>['logging'],
) {
  return createYoga({
    logging,
    schema: createSchema({
      typeDefs: [
        idempotentDirectiveTypeDefs,
        'type Query { ping: Int } type Mutation { pay(amount: Int!): Int! @idempotent }',
      ],
      resolvers: { Mutation: { pay: (_root, { amount }: { amount: number }) => amount } },
    }),
    plugins: [useIdempotency({ guard, scope: () => 'acct_1' })],
  });
}

async function pay(yoga: ReturnType<typeof paymentsYoga>, key: string) {
  const response = await yoga.fetch('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ query: 'mutation { pay(amount: 5) }' }),
  });
  return { status: response.status, text: await response.text() };
}

for (const kind of UNSET_STORES) {
  const skip = kind.needsServer && !pg.realPostgres;
  describe.skipIf(skip)(
    `Yoga on ${kind.name}, not set up${skip ? ` (${pg.skipReason})` : ''}`,
    () => {
      let unset: UnsetStore;
      beforeAll(async () => {
        unset = await kind.open();
      });
      afterAll(() => unset?.close());

      it("S15/S25/S26: concurrent mutations all get the 503 without the reason; Yoga's logger prints the reason once, without a raw key; the events carry it; after the fix the next one runs", async () => {
        const log = capturingLogger();
        const events: GuardEvent[] = [];
        const guard = createGuard({ store: unset.store, onEvent: (event) => events.push(event) });
        const yoga = paymentsYoga(guard, log.logger);
        const keys = Array.from({ length: 6 }, () => `order-${randomUUID()}`);

        const answers = await Promise.all(keys.map((key) => pay(yoga, key)));

        for (const answer of answers) {
          expect(answer.status).toBe(503);
          const body = JSON.parse(answer.text);
          expect(body.data ?? null).toBeNull();
          expect(body.errors[0].extensions.code).toBe('IDEMPOTENCY_STORE_UNAVAILABLE');
          expect(answer.text).not.toMatch(unset.missing);
          expect(answer.text).not.toMatch(/migrat|records table|StoreFailure/i);
        }
        expect(log.errors()).toHaveLength(1);
        expect(log.errors()[0]).toMatch(unset.missing);
        const failed = events.filter((event) => event.type === 'failed');
        expect(failed).toHaveLength(keys.length);
        for (const event of failed) expect(event.detail).toMatch(unset.missing);
        const observed = JSON.stringify([log.lines, events]);
        for (const key of keys) expect(observed).not.toContain(key);

        await unset.fix();
        const fixed = await pay(yoga, `order-${randomUUID()}`);
        expect(fixed.status).toBe(200);
        expect(JSON.parse(fixed.text).data).toEqual({ pay: 5 });
        expect(log.errors()).toHaveLength(1);
      });
    },
  );
}

describe('where the reason goes', () => {
  it("S15: the guard's own onSetupError wins over Yoga's logger", async () => {
    const kind = UNSET_STORES.find((candidate) => candidate.name === 'SQLite')!;
    const unset = await kind.open();
    try {
      const log = capturingLogger();
      const told: string[] = [];
      const guard = createGuard({
        store: unset.store,
        onSetupError: (message) => told.push(message),
      });
      const yoga = paymentsYoga(guard, log.logger);
      await Promise.all([pay(yoga, 'order-a'), pay(yoga, 'order-b')]);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(unset.missing);
      expect(log.errors()).toEqual([]);
    } finally {
      await unset.close();
    }
  });
});
