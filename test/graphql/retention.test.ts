/**
 * Per-field retention, end to end (SPEC S14, S18): a field's `@idempotent(retention:)` (SDL)
 * or `extensions.idempotent.retention` (code-first) sets how long the operation's record is
 * replayed; an operation with several guarded fields keeps its one record as long as the
 * longest of them asks. Observed on the stored record's expiry.
 */
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, specifiedDirectives } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { idempotentDirective, useIdempotency } from '../../src/graphql/index.js';
import { createGuard } from '../../src/index.js';
import { sqlitePayments } from './sqlite.js';
import { gql, paymentsServer } from './support.js';

/** The guard's own retention in these tests: far from the fields' 60 and 600 seconds. */
const GUARD_RETENTION_MS = 10_000;

/** Seconds from now until the record of `key` expires, rounded. */
async function secondsLeft(
  store: ReturnType<typeof sqlitePayments>['store'],
  scope: string,
  key: string,
) {
  const record = await store.read({ scope, key });
  expect(record?.state).toBe('complete');
  return Math.round((record!.expiresAt.getTime() - Date.now()) / 1000);
}

describe('retention per field (SPEC S14, S18)', () => {
  function sdlServer() {
    const sqlite = sqlitePayments();
    const server = paymentsServer({ ...sqlite, guard: { retention: GUARD_RETENTION_MS } });
    return { ...sqlite, ...server };
  }

  it("S14: a field's @idempotent(retention:) in SDL sets its record's retention", async () => {
    const { yoga, store } = sdlServer();
    // `tip` is `@idempotent(required: false, retention: 60)`.
    await gql(yoga, { query: 'mutation { tip(amount: 1) { id } }', key: 'k-tip' });
    expect(await secondsLeft(store, 'acct_1', 'k-tip')).toBe(60);
  });

  it("S14: a field without its own retention gets the guard's", async () => {
    const { yoga, store } = sdlServer();
    await gql(yoga, { query: 'mutation { pay(amount: 1) { id } }', key: 'k-pay' });
    expect(await secondsLeft(store, 'acct_1', 'k-pay')).toBe(GUARD_RETENTION_MS / 1000);
  });

  it('S14/S18: an operation with several guarded fields keeps its record for the longest retention', async () => {
    const { yoga, store } = sdlServer();
    for (const query of [
      'mutation { pay(amount: 1) { id } tip(amount: 2) { id } }',
      'mutation { tip(amount: 2) { id } pay(amount: 1) { id } }',
    ]) {
      const key = `k-both-${query.indexOf('tip')}`;
      await gql(yoga, { query, key });
      expect(await secondsLeft(store, 'acct_1', key)).toBe(60);
    }
  });

  it("S14: a code-first field's extensions.idempotent.retention sets its record's retention, the longest winning", async () => {
    const { store } = sqlitePayments();
    const field = (retention?: number) => ({
      type: GraphQLInt,
      extensions: { idempotent: retention === undefined ? true : { retention } },
      resolve: () => 1,
    });
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
      mutation: new GraphQLObjectType({
        name: 'Mutation',
        fields: { short: field(60), long: field(600), plain: field() },
      }),
      directives: [...specifiedDirectives, idempotentDirective],
    });
    const guard = createGuard({ store, retention: GUARD_RETENTION_MS });
    const yoga = createYoga({
      schema,
      plugins: [useIdempotency({ guard, scope: () => 's' })],
      logging: false,
    });
    const cases = [
      ['mutation { short }', 60],
      ['mutation { long }', 600],
      ['mutation { plain }', GUARD_RETENTION_MS / 1000],
      ['mutation { short long plain }', 600],
      ['mutation { long short }', 600],
    ] as const;
    for (const [i, [query, seconds]] of cases.entries()) {
      await gql(yoga, { query, key: `cf-${i}` });
      expect(await secondsLeft(store, 's', `cf-${i}`), query).toBe(seconds);
    }
  });
});
