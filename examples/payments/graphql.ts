/**
 * The GraphQL surface: Yoga (with GraphiQL at /graphql in a browser, served from the
 * installed package so that it needs no internet), the schema of the service contract, and
 * `useIdempotency` guarding `createPayment` (marked `@idempotent`).
 */

import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
import type { Guard } from '../../src/index.js';
import { accountFromAuthorization, unauthenticated, useRequireAccount } from './auth.js';
import { PaymentValidationError, validatePaymentInput } from './payment.js';
import type { PaymentsService } from './payments-service.js';

export const typeDefs = /* GraphQL */ `
  ${idempotentDirectiveTypeDefs}
  type Mutation {
    createPayment(input: CreatePaymentInput!): Payment! @idempotent
  }
  input CreatePaymentInput {
    amount: Int!
    currency: String!
    customerId: String!
    idempotencyKey: String
  }
  type Payment {
    id: ID!
    amount: Int!
    currency: String!
    customerId: String!
    createdAt: String!
  }
  type Query {
    payments: [Payment!]!
  }
`;

/** A type alias, not an interface: the plugin wants a `Record<string, unknown>` context. */
export type GraphQLContext<Tx> = {
  accountId: string | undefined;
  /** Set by `useIdempotency` while a guarded mutation runs. */
  idempotency?: IdempotencyContext<Tx>;
};

const EXAMPLE_OPERATION = /* GraphQL */ `# Headers (below) carry "Authorization: Bearer acct_demo".
# Run this twice: the second answer is the stored one, with
# the same id and createdAt (the network tab shows the
# response header Idempotent-Replayed: true). Change the
# amount but keep the key: IDEMPOTENCY_KEY_REUSED.
mutation Pay {
  createPayment(input: { amount: 1299, currency: "EUR", customerId: "cus_42", idempotencyKey: "order-42" }) {
    id
    amount
    currency
    createdAt
  }
}
`;

export function createGraphQLHandler<Tx>(guard: Guard<Tx>, service: PaymentsService<Tx>) {
  const schema = createSchema<Record<string, unknown> & GraphQLContext<Tx>>({
    typeDefs,
    resolvers: {
      Query: {
        payments: (_parent, _args, context) => {
          if (!context.accountId) throw unauthenticated();
          return service.list(context.accountId);
        },
      },
      Mutation: {
        createPayment: (_parent, args: { input: unknown }, context) => {
          // Both are guaranteed by the plugins: useRequireAccount ran first, and
          // `createPayment` is `@idempotent` with a required key.
          const { accountId, idempotency } = context;
          if (!accountId || !idempotency) throw new Error('createPayment ran unguarded');
          // Inside the guard: a 400 here rolls back and frees the key, so the client
          // may fix the input and retry with the same key.
          return service.create(idempotency.tx, accountId, validate(args.input));
        },
      },
    },
  });

  return createYoga<Record<string, unknown>, GraphQLContext<Tx>>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // GraphiQL from the installed package, not from a CDN: the page works offline.
    renderGraphiQL,
    graphiql: {
      title: 'mutation-guard payments',
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify({ Authorization: 'Bearer acct_demo' }),
    },
    // Browsers may send Idempotency-Key and read Idempotent-Replayed / Retry-After.
    cors: {
      origin: '*',
      allowedHeaders: ['Content-Type', 'Authorization', 'Idempotency-Key'],
      exposedHeaders: ['Idempotent-Replayed', 'Retry-After'],
    },
    context: ({ request }) => ({
      accountId: accountFromAuthorization(request.headers.get('authorization')),
    }),
    plugins: [
      useInvalidOperationIs400(),
      useRequireAccount(), // before the guard: 401 without claiming anything
      useIdempotency<Tx, GraphQLContext<Tx>>({
        guard,
        scope: (context) => {
          if (!context.accountId) throw unauthenticated(); // unreachable after useRequireAccount
          return context.accountId;
        },
      }),
    ],
  });
}

/** Validates with the same rules as tRPC; a bad input is a 400 that names each field. */
function validate(input: unknown) {
  try {
    return validatePaymentInput(input);
  } catch (error) {
    if (!(error instanceof PaymentValidationError)) throw error;
    throw new GraphQLError(error.message, {
      extensions: { code: 'BAD_USER_INPUT', issues: error.issues, http: { status: 400 } },
    });
  }
}

/**
 * An operation that fails validation (`amount: "x"` written in the query) gets HTTP 400 for
 * every client. Yoga follows the GraphQL-over-HTTP spec, which answers such errors with 200
 * to clients that accept only `application/json`; the service contract promises a 400 for
 * every bad input. Our after-validate hook runs before Yoga's, which keeps an explicit
 * `spec: false`.
 */
function useInvalidOperationIs400(): Plugin {
  return {
    onValidate() {
      return ({ valid, result }) => {
        if (valid) return;
        for (const error of result) {
          const extensions = error.extensions as Record<string, unknown>;
          const http = (extensions.http ?? {}) as Record<string, unknown>;
          extensions.http = { ...http, spec: false, status: http.status ?? 400 };
        }
      };
    },
  };
}
