/**
 * The input bounds on a real Yoga server (SPEC S5, S13): `maxInputDepth` and `maxInputBytes`
 * see an input written as literal arguments as they see it sent as variables. A request over
 * them answers 413 `IDEMPOTENCY_INPUT_TOO_LARGE`; nothing runs and nothing is stored.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { idempotentDirectiveTypeDefs, useIdempotency } from '../../src/graphql/index.js';
import { createGuard } from '../../src/index.js';
import { openSqlite, sqliteStore } from '../../src/sqlite/index.js';
import { codeOf, gql } from './support.js';

function setup() {
  const db = openSqlite(':memory:');
  const guard = createGuard({ store: sqliteStore(db), maxInputBytes: 8192 });
  const runs = { keep: 0 };
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        ${idempotentDirectiveTypeDefs}
        input Link { next: Link, text: String }
        type Query { ok: Boolean }
        type Mutation { keep(link: Link!): Int! @idempotent }
      `,
      resolvers: { Mutation: { keep: () => ++runs.keep } },
    }),
    plugins: [useIdempotency({ guard, scope: () => 'acct_1' })],
    logging: false,
  });
  const records = () =>
    (db.$client.prepare('select count(*) as n from idempotency_records').get() as { n: number }).n;
  return { yoga, runs, records };
}

/** A `Link` that nests `depth` levels, as a JavaScript value and as a GraphQL literal. */
function chain(depth: number, text = 'end') {
  let value: Record<string, unknown> = { text };
  let literal = `{ text: ${JSON.stringify(text)} }`;
  for (let i = 1; i < depth; i++) {
    value = { next: value };
    literal = `{ next: ${literal} }`;
  }
  return { value, literal };
}

const asVariable = (depth: number, text?: string) => ({
  query: 'mutation Keep($link: Link!) { keep(link: $link) }',
  variables: { link: chain(depth, text).value },
});
const asLiteral = (depth: number, text?: string) => ({
  query: `mutation Keep { keep(link: ${chain(depth, text).literal}) }`,
});

describe('input bounds see literal arguments (SPEC S5, S13)', () => {
  it('S5/S13: an input nested 160 levels answers 413 inline as it does as variables; nothing runs or is stored', async () => {
    const { yoga, runs, records } = setup();
    for (const [key, request] of [
      ['k-var', asVariable(160)],
      ['k-lit', asLiteral(160)],
    ] as const) {
      const response = await gql(yoga, { ...request, key });
      expect(response.status, key).toBe(413);
      expect(codeOf(response), key).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    }
    expect(runs.keep).toBe(0);
    expect(records()).toBe(0);
  });

  it('S5: a literal counts as the variable it could have been: both pass at 127 levels, both fail at 128', async () => {
    const { yoga, runs } = setup();
    const statuses = async (depth: number) => [
      (await gql(yoga, { ...asVariable(depth), key: `k-var-${depth}` })).status,
      (await gql(yoga, { ...asLiteral(depth), key: `k-lit-${depth}` })).status,
    ];
    expect(await statuses(127)).toEqual([200, 200]);
    expect(await statuses(128)).toEqual([413, 413]);
    expect(runs.keep).toBe(2);
  });

  it('S5/S13: a literal argument over maxInputBytes answers 413 as the same variable does', async () => {
    const { yoga, runs, records } = setup();
    const long = 'x'.repeat(9000);
    for (const [key, request] of [
      ['k-var-big', asVariable(1, long)],
      ['k-lit-big', asLiteral(1, long)],
    ] as const) {
      const response = await gql(yoga, { ...request, key });
      expect(response.status, key).toBe(413);
      expect(codeOf(response), key).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    }
    expect(runs.keep).toBe(0);
    expect(records()).toBe(0);
  });
});
