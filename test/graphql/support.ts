/**
 * What the GraphQL tests share: a payments schema whose resolvers write business rows
 * through `context.idempotency.tx` (or the plain db when unguarded), a Yoga server on a
 * given guard, and a small `yoga.fetch` helper.
 */
import { createSchema, createYoga, type YogaServerOptions } from 'graphql-yoga';
import {
  type IdempotencyContext,
  type IdempotencyPluginOptions,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
import {
  createGuard,
  type Guard,
  type GuardOptions,
  type IdempotencyStore,
} from '../../src/index.js';

/** A promise and its resolver, to hold resolvers in flight. */
export { deferred } from '../support/deferred.js';

export const typeDefs = /* GraphQL */ `
  ${idempotentDirectiveTypeDefs}
  type Payment {
    id: Int!
    amount: Int!
    note: String
  }
  input PayInput {
    idempotencyKey: String
    amount: Int!
    note: String
  }
  type Query {
    payments: Int!
  }
  type Mutation {
    pay(amount: Int!, note: String, idempotencyKey: String): Payment! @idempotent
    payWith(input: PayInput!): Payment! @idempotent
    tip(amount: Int!): Payment! @idempotent(required: false, retentionSeconds: 60)
    "Declines amounts over 100 with a final business error (a GraphQLError)."
    charge(amount: Int!): Payment @idempotent
    "Writes a row, then fails unexpectedly."
    crash(amount: Int!): Payment @idempotent
    "Writes a row, then fails with a GraphQLError (expected, not declared final)."
    reject(amount: Int!): Payment @idempotent
    "Guarded through the plugin's \`fields\` option."
    listed(amount: Int!): Payment!
    "Not guarded."
    note(text: String!): String!
  }
`;

/** Runs a statement on the business database: the transaction when guarded, else the db. */
export type Write = (tx: unknown, amount: number, note: string | null) => Promise<number>;

export interface Harness {
  calls: Record<string, number>;
  /** Resolvers wait for this before returning (tests hold mutations in flight). */
  gate: { wait: Promise<void> };
}

export function paymentsSchema(write: Write, fallbackTx: unknown, harness: Harness) {
  const record =
    (name: string, fail?: 'crash' | 'reject' | 'charge') =>
    async (
      _: unknown,
      args: {
        amount?: number;
        note?: string | null;
        input?: { amount: number; note?: string | null };
      },
      context: Record<string, unknown>,
    ) => {
      harness.calls[name] = (harness.calls[name] ?? 0) + 1;
      const amount = args.amount ?? args.input!.amount;
      const note = args.note ?? args.input?.note ?? null;
      const tx = (context.idempotency as IdempotencyContext | undefined)?.tx ?? fallbackTx;
      const id = await write(tx, amount, note);
      await harness.gate.wait;
      if (fail === 'crash') throw new Error(`db password is hunter2 (payment ${id})`);
      if (fail === 'reject') {
        const { GraphQLError } = await import('graphql');
        throw new GraphQLError('Try again later', { extensions: { code: 'TRY_LATER' } });
      }
      if (fail === 'charge' && amount > 100) {
        const { GraphQLError } = await import('graphql');
        throw new GraphQLError('Card declined', {
          // A cookie for this caller only: a replay must never send it to another (S9).
          extensions: {
            code: 'CARD_DECLINED',
            http: { status: 402, headers: { 'set-cookie': 'sid=alice-secret-session' } },
          },
        });
      }
      return { id, amount, note };
    };
  return createSchema<Record<string, unknown>>({
    typeDefs,
    resolvers: {
      Query: { payments: () => 0 },
      Mutation: {
        pay: record('pay'),
        payWith: record('payWith'),
        tip: record('tip'),
        charge: record('charge', 'charge'),
        crash: record('crash', 'crash'),
        reject: record('reject', 'reject'),
        listed: record('listed'),
        note: (_: unknown, { text }: { text: string }) => {
          harness.calls.note = (harness.calls.note ?? 0) + 1;
          return text;
        },
      },
    },
  });
}

export interface ServerSetup<Tx> {
  store: IdempotencyStore<Tx>;
  write: Write;
  fallbackTx: unknown;
  guard?: Omit<GuardOptions<Tx>, 'store'>;
  /** A guard to use instead of one on `store` (a stub with known answers). */
  replaceGuard?: Guard<Tx>;
  plugin?: Omit<IdempotencyPluginOptions<Tx, Record<string, unknown>>, 'guard'>;
  yoga?: Partial<YogaServerOptions<Record<string, unknown>, Record<string, unknown>>>;
}

export function paymentsServer<Tx>(setup: ServerSetup<Tx>) {
  const harness: Harness = { calls: {}, gate: { wait: Promise.resolve() } };
  const guard: Guard<Tx> =
    setup.replaceGuard ?? createGuard({ store: setup.store, ...setup.guard });
  const yoga = createYoga({
    schema: paymentsSchema(setup.write, setup.fallbackTx, harness),
    plugins: [
      useIdempotency<Tx>({
        guard,
        scope: (ctx) => (ctx.request as Request).headers.get('x-account') ?? 'acct_1',
        fields: ['listed'],
        ...setup.plugin,
      }),
    ],
    logging: false,
    ...setup.yoga,
  });
  return { yoga, guard, harness };
}

export interface GqlRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  key?: string;
  headers?: Record<string, string>;
}

export interface GqlResponse {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  };
  text: string;
}

type Fetchable = { fetch: (url: string, init: RequestInit) => Promise<Response> | Response };

export async function gql(yoga: Fetchable, request: GqlRequest): Promise<GqlResponse> {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(request.key === undefined ? {} : { 'idempotency-key': request.key }),
      ...request.headers,
    },
    body: JSON.stringify({
      query: request.query,
      variables: request.variables,
      operationName: request.operationName,
    }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}

/** The code of the first error, or undefined. */
export function codeOf(response: GqlResponse): unknown {
  return response.body.errors?.[0]?.extensions?.code;
}
