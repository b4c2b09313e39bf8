/**
 * Per-field retention, end to end (SPEC S14, S18): a field's `@idempotent(retentionSeconds:)`
 * (SDL) or `extensions.idempotent.retention` (code-first, in milliseconds) sets how long the
 * operation's record is replayed; an operation with several guarded fields keeps its one
 * record as long as the longest of them asks. Observed on the stored record's expiry.
 */
import {
  buildSchema,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  specifiedDirectives,
} from 'graphql';
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import {
  idempotentDirective,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
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
  expect(record?.outcome).toBe('committed');
  return Math.round((record!.expiresAt.getTime() - Date.now()) / 1000);
}

describe('retention per field (SPEC S14, S18)', () => {
  function sdlServer() {
    const sqlite = sqlitePayments();
    const server = paymentsServer({ ...sqlite, guard: { retention: GUARD_RETENTION_MS } });
    return { ...sqlite, ...server };
  }

  it("S14: a field's @idempotent(retentionSeconds:) in SDL sets its record's retention", async () => {
    const { yoga, store } = sdlServer();
    // `tip` is `@idempotent(required: false, retentionSeconds: 60)`.
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
    const { store, yoga } = codeFirstServer({ short: 60_000, long: 600_000, plain: undefined });
    await expectRetentions(yoga, store, 'cf', [
      ['mutation { short }', 60],
      ['mutation { long }', 600],
      ['mutation { plain }', GUARD_RETENTION_MS / 1000],
      ['mutation { short long plain }', 600],
      ['mutation { long short }', 600],
    ]);
  });

  it("S14: the plugin's retention (ms) is that of its fields without their own; a field's own wins, the longest winning", async () => {
    const { store, yoga } = codeFirstServer(
      { short: 60_000, long: 600_000, plain: undefined },
      { retention: 120_000 },
    );
    await expectRetentions(yoga, store, 'pr', [
      ['mutation { short }', 60],
      ['mutation { plain }', 120],
      ['mutation { short plain }', 120],
      ['mutation { long plain }', 600],
    ]);
  });

  it.each([
    ['60 (seconds written where milliseconds go)', 60],
    ['0', 0],
    ['NaN', Number.NaN],
  ])(
    "S14: a code-first field's retention of %s is refused at start-up, naming the field and the unit",
    (_, retention) => {
      expect(() => codeFirstServer({ pay: retention })).toThrow(
        /^mutation-guard: the mutation field "pay" sets a retention of .* ms; a field's retention is in milliseconds/,
      );
    },
  );

  it('S14: the SDL argument is retentionSeconds; the old `retention` argument fails schema building', () => {
    const sdl = (args: string) => /* GraphQL */ `
      ${idempotentDirectiveTypeDefs}
      type Query { ok: Int }
      type Mutation { pay: Int @idempotent(${args}) }
    `;
    expect(() => buildSchema(sdl('retentionSeconds: 60'))).not.toThrow();
    expect(() => buildSchema(sdl('retention: 60'))).toThrow(/Unknown argument "retention"/);
  });
});

/**
 * A Yoga server on a code-first schema whose mutation fields are guarded through
 * `extensions.idempotent`, each with the retention given (milliseconds, as every TypeScript
 * option; `undefined`: none of its own), and the guard's retention set to `GUARD_RETENTION_MS`.
 */
function codeFirstServer(
  retentions: Record<string, number | undefined>,
  plugin: { retention?: number } = {},
) {
  const { store } = sqlitePayments();
  const fields = Object.fromEntries(
    Object.entries(retentions).map(([name, retention]) => [
      name,
      {
        type: GraphQLInt,
        extensions: { idempotent: retention === undefined ? true : { retention } },
        resolve: () => 1,
      },
    ]),
  );
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    mutation: new GraphQLObjectType({ name: 'Mutation', fields }),
    directives: [...specifiedDirectives, idempotentDirective],
  });
  const guard = createGuard({ store, retention: GUARD_RETENTION_MS });
  const yoga = createYoga({
    schema,
    plugins: [useIdempotency({ guard, scope: () => 's', ...plugin })],
    logging: false,
  });
  return { store, yoga };
}

/** Runs each mutation once with its own key, then checks its record's seconds left. */
async function expectRetentions(
  yoga: ReturnType<typeof codeFirstServer>['yoga'],
  store: ReturnType<typeof sqlitePayments>['store'],
  keyPrefix: string,
  cases: ReadonlyArray<readonly [query: string, seconds: number]>,
) {
  for (const [i, [query, seconds]] of cases.entries()) {
    await gql(yoga, { query, key: `${keyPrefix}-${i}` });
    expect(await secondsLeft(store, 's', `${keyPrefix}-${i}`), query).toBe(seconds);
  }
}
