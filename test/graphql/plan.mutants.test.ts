/**
 * How the GraphQL plugin plans a mutation before anything runs (SPEC S1, S3, S5, S13, S14,
 * S17, S18), called straight on parsed operations: which fields are guarded, the one key,
 * the fingerprint without the key, the name and the retention. Each case here is one a bug
 * planted by `npm run mutate` got past the plugin's end-to-end tests.
 */
import {
  buildSchema,
  type DocumentNode,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  getOperationAST,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schemaGuardsFinder } from '../../src/graphql/fields.js';
import { idempotentDirectiveTypeDefs } from '../../src/graphql/index.js';
import { type OperationPlan, planOperation } from '../../src/graphql/plan.js';

const schema = buildSchema(/* GraphQL */ `
  ${idempotentDirectiveTypeDefs}
  input PayInput {
    idempotencyKey: String
    amount: Int!
    note: String
  }
  type Query {
    ok: Boolean
  }
  type Mutation {
    pay(amount: Int!, note: String, idempotencyKey: String): Int @idempotent
    payWith(input: PayInput!): Int @idempotent
    payMaybe(input: PayInput, amount: Int): Int @idempotent
    keyOnly(idempotencyKey: String!): Int @idempotent
    tip(amount: Int!): Int @idempotent(required: false, retentionSeconds: 60)
    strict(amount: Int!): Int @idempotent(required: true)
    refund(amount: Int!): Int @idempotent(retentionSeconds: 5)
    note(text: String!): String
  }
`);

interface Options {
  variables?: Record<string, unknown>;
  operationName?: string;
  header?: string;
  required?: boolean;
  retention?: number;
  limits?: { maxInputBytes?: number };
  on?: GraphQLSchema;
}

type Planned = ReturnType<typeof planOperation>;

function plan(source: string | DocumentNode, options: Options = {}): Planned {
  const document = typeof source === 'string' ? parse(source) : source;
  const operation = getOperationAST(document, options.operationName);
  if (!operation) throw new Error('no such operation');
  return planOperation({
    args: {
      schema: options.on ?? schema,
      document,
      variableValues: options.variables ?? {},
      operationName: options.operationName,
    },
    operation,
    findGuards: schemaGuardsFinder([]),
    header: options.header,
    required: options.required ?? true,
    retention: options.retention,
    limits: options.limits ?? {},
  });
}

/** The plan, which must be one (not an error, not a pass-through). */
function planned(source: string | DocumentNode, options: Options = {}): OperationPlan {
  const result = plan(source, options);
  if (!result || 'error' in result) {
    throw new Error(`expected a plan, got ${result ? result.error.message : 'undefined'}`);
  }
  return result;
}

const fp = (source: string | DocumentNode, options: Options = {}) =>
  planned(source, options).fingerprint;

describe('S5: the key is not part of the fingerprint, wherever it is sent', () => {
  const cases: [string, string, (key: string) => Options][] = [
    ['a literal argument', 'mutation { pay(amount: 5, idempotencyKey: "KEY") }', () => ({})],
    [
      'an argument variable',
      'mutation ($k: String) { pay(amount: 5, idempotencyKey: $k) }',
      (key) => ({ variables: { k: key } }),
    ],
    [
      'an input-object literal',
      'mutation { payWith(input: { amount: 5, idempotencyKey: "KEY" }) }',
      () => ({}),
    ],
    [
      'a variable inside an input-object literal',
      'mutation ($k: String) { payWith(input: { amount: 5, idempotencyKey: $k }) }',
      (key) => ({ variables: { k: key } }),
    ],
    [
      'an input-object variable',
      'mutation ($in: PayInput!) { payWith(input: $in) }',
      (key) => ({ variables: { in: { amount: 5, idempotencyKey: key } } }),
    ],
    ['the client directive', 'mutation { pay(amount: 5) @idempotent(key: "KEY") }', () => ({})],
    [
      'a variable of the client directive',
      'mutation ($k: String) { pay(amount: 5) @idempotent(key: $k) }',
      (key) => ({ variables: { k: key } }),
    ],
  ];
  for (const [where, source, options] of cases) {
    it(`S5/S1: keys in ${where} give one fingerprint`, () => {
      const a = planned(source.replace('KEY', 'key-a'), options('key-a'));
      const b = planned(source.replace('KEY', 'key-b'), options('key-b'));
      expect([a.key, b.key]).toEqual(['key-a', 'key-b']);
      expect(a.fingerprint).toBe(b.fingerprint);
    });
  }

  it('S1/S5: a key moved from an input-object variable to the header keeps the fingerprint', () => {
    const source = 'mutation ($in: PayInput!) { payWith(input: $in) }';
    const inInput = fp(source, { variables: { in: { amount: 5, idempotencyKey: 'k1' } } });
    expect(fp(source, { variables: { in: { amount: 5 } }, header: 'k1' })).toBe(inInput);
  });

  it('S5: everything but the key counts, in literals, input objects and variables', () => {
    const pairs: [string, string, Options?, Options?][] = [
      [
        'mutation { payWith(input: { amount: 5, idempotencyKey: "k" }) }',
        'mutation { payWith(input: { amount: 6, idempotencyKey: "k" }) }',
      ],
      [
        'mutation { payWith(input: { amount: 5, note: "a", idempotencyKey: "k" }) }',
        'mutation { payWith(input: { amount: 5, note: "b", idempotencyKey: "k" }) }',
      ],
      [
        'mutation ($in: PayInput!) { payWith(input: $in) }',
        'mutation ($in: PayInput!) { payWith(input: $in) }',
        { variables: { in: { amount: 5, idempotencyKey: 'k' } } },
        { variables: { in: { amount: 6, idempotencyKey: 'k' } } },
      ],
      [
        'mutation ($a: Int!) { pay(amount: $a, idempotencyKey: "k") }',
        'mutation ($a: Int!) { pay(amount: $a, idempotencyKey: "k") }',
        { variables: { a: 5 } },
        { variables: { a: 6 } },
      ],
    ];
    for (const [one, other, first = {}, second = {}] of pairs) {
      expect(fp(one, first)).not.toBe(fp(other, second));
    }
  });
});

describe('S5/S18: the operation, and a document planned many times', () => {
  const two = 'mutation A { pay(amount: 1) } mutation B { pay(amount: 2) }';

  it('S5: two operations of one document have fingerprints of their own', () => {
    expect(fp(two, { operationName: 'A', header: 'k' })).not.toBe(
      fp(two, { operationName: 'B', header: 'k' }),
    );
  });

  it('gives a document planned again the fingerprint a fresh parse gives, whatever was planned of it before', () => {
    const shared = parse(two);
    expect(fp(shared, { operationName: 'A', header: 'k' })).toBe(
      fp(two, { operationName: 'A', header: 'k' }),
    );
    expect(fp(shared, { operationName: 'B', header: 'k' })).toBe(
      fp(two, { operationName: 'B', header: 'k' }),
    );

    const skipping = /* GraphQL */ `
      mutation M($s: Boolean!) {
        a: pay(amount: 1, idempotencyKey: "k") @skip(if: $s)
        b: pay(amount: 2, idempotencyKey: "k") @include(if: $s)
        c: pay(amount: 3, idempotencyKey: "k") @skip(if: $s)
      }`;
    const document = parse(skipping);
    for (const s of [false, true, false, true]) {
      expect(fp(document, { variables: { s } })).toBe(fp(skipping, { variables: { s } }));
    }
    const growing = /* GraphQL */ `
      mutation M($s: Boolean!) {
        a: pay(amount: 1, idempotencyKey: "k")
        b: pay(amount: 2, idempotencyKey: "k") @skip(if: $s)
      }`;
    const again = parse(growing);
    for (const s of [true, false, true]) {
      expect(fp(again, { variables: { s } })).toBe(fp(growing, { variables: { s } }));
    }
  });
});

describe('S18: the plan', () => {
  it("names the plan by the operation's name, else by its guarded fields", () => {
    expect(planned('mutation Pay { pay(amount: 1) }', { header: 'k' }).name).toBe('Pay');
    expect(planned('mutation { pay(amount: 1) refund(amount: 2) }', { header: 'k' }).name).toBe(
      'pay,refund',
    );
    expect(
      planned('mutation { ...P ...P } fragment P on Mutation { pay(amount: 1) }', { header: 'k' })
        .name,
    ).toBe('pay');
  });

  it('S14: keeps the record as long as the longest retention any guarded field asks for', () => {
    const source = 'mutation { refund(amount: 1) pay(amount: 2) }';
    expect(planned(source, { header: 'k' }).retentionMs).toBe(5_000);
    expect(planned(source, { header: 'k', retention: 10_000 }).retentionMs).toBe(10_000);
    expect(
      planned('mutation { tip(amount: 1) refund(amount: 1) }', { header: 'k' }).retentionMs,
    ).toBe(60_000);
    expect(planned('mutation { pay(amount: 1) }', { header: 'k' }).retentionMs).toBeUndefined();
  });

  it('S1: reads the key from a field whose only argument is the key, and from the header when an optional input is left out', () => {
    expect(planned('mutation { keyOnly(idempotencyKey: "k1") }').key).toBe('k1');
    expect(planned('mutation { payMaybe(amount: 1) }', { header: 'h1' }).key).toBe('h1');
  });
});

describe('S3/S17: which mutations are guarded', () => {
  it("S3: a field's @idempotent(required:) decides over the plugin's required", () => {
    expect(plan('mutation { tip(amount: 1) }')).toBeUndefined();
    const missing = plan('mutation { strict(amount: 1) }', { required: false });
    expect(missing && 'error' in missing && missing.error.extensions.code).toBe(
      'IDEMPOTENCY_KEY_MISSING',
    );
    expect(plan('mutation { pay(amount: 1) }', { required: false })).toBeUndefined();
  });

  it('S17: @skip and @include decide as execution does', () => {
    const guarded = (directive: string) =>
      plan(`mutation { pay(amount: 1) ${directive} }`, { header: 'k' }) !== undefined;
    expect(guarded('@skip(if: true)')).toBe(false);
    expect(guarded('@skip(if: false)')).toBe(true);
    expect(guarded('@include(if: false)')).toBe(false);
    expect(guarded('@include(if: true)')).toBe(true);
  });

  it('S18: finds a guarded field in an inline fragment, with or without a type condition, and in a fragment spread', () => {
    for (const source of [
      'mutation { ... on Mutation { pay(amount: 1) } }',
      'mutation { ... { pay(amount: 1) } }',
      'mutation { ...P } fragment P on Mutation { pay(amount: 1) }',
    ]) {
      expect(planned(source, { header: 'k' }).key, source).toBe('k');
    }
  });

  it('S17: an unguarded mutation of a schema with guarded fields passes through', () => {
    expect(plan('mutation { note(text: "x") }', { header: 'k' })).toBeUndefined();
  });

  it('S1: a code-first schema without the directive definition reads the header key', () => {
    const codeFirst = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
      mutation: new GraphQLObjectType({
        name: 'Mutation',
        fields: {
          pay: {
            type: GraphQLInt,
            args: { amount: { type: GraphQLInt } },
            extensions: { idempotent: { retention: 1_000 } },
          },
        },
      }),
    });
    const result = planned('mutation { pay(amount: 1) }', { on: codeFirst, header: 'k' });
    expect(result).toMatchObject({ key: 'k', retentionMs: 1_000 });
  });

  it('S14: refuses a code-first retention under 1000 ms when the schema is read', () => {
    const withRetention = (retention: number) =>
      new GraphQLSchema({
        query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
        mutation: new GraphQLObjectType({
          name: 'Mutation',
          fields: {
            pay: { type: GraphQLString, extensions: { idempotent: { retention } } },
          },
        }),
      });
    expect(() => schemaGuardsFinder([])(withRetention(999))).toThrow(/at least 1000/);
    expect(schemaGuardsFinder([])(withRetention(1_000)).fields.size).toBe(1);
  });

  it('finds no guarded field in a schema without a mutation type', () => {
    const queryOnly = buildSchema('type Query { ok: Boolean }');
    expect(schemaGuardsFinder([])(queryOnly).fields.size).toBe(0);
  });
});

describe('S5/S13: refused before anything runs', () => {
  it('S5: an input over maxInputBytes is answered 413, nothing claimed', () => {
    const result = plan('mutation { pay(amount: 1, note: "long enough") }', {
      header: 'k',
      limits: { maxInputBytes: 20 },
    });
    expect(result && 'error' in result && result.error.extensions.code).toBe(
      'IDEMPOTENCY_INPUT_TOO_LARGE',
    );
  });

  it('S13: an argument that does not coerce is answered as execution would, with its own error', () => {
    const result = plan('mutation { pay(amount: 1, idempotencyKey: 7) }');
    // graphql 16.4 names the argument, later versions the type: either is execution's own text.
    expect(result && 'error' in result && result.error.message).toMatch(/String|idempotencyKey/);
    expect(result && 'error' in result && result.error.extensions.code).toBeUndefined();
  });
});
