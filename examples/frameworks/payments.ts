/**
 * The app every framework example serves: one guarded payment, as a GraphQL mutation (Yoga)
 * and as a tRPC procedure. It takes the guard from outside, so the same app runs on the
 * SQLite store in development and on Postgres in production; the framework files only mount
 * it. The account in the `x-account` header stands in for your authentication: it is the
 * scope, the principal whose payment the answer holds, so only that account can replay it.
 */
import { initTRPC } from '@trpc/server';
import { createSchema, createYoga } from 'graphql-yoga';
import type { Guard } from 'mutation-guard';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from 'mutation-guard/graphql';
import {
  assertIdempotencySetup,
  idempotency,
  idempotencyErrorFormatter,
} from 'mutation-guard/trpc';
import { z } from 'zod';

export interface PaymentsOptions {
  /** Where Yoga answers; `/api/graphql` in a Next.js app. @default '/graphql' */
  graphqlEndpoint?: string;
  /** A pretend card processor's latency inside the guarded transaction. @default 0 */
  latencyMs?: number;
}

/** Who is calling. Node's and fetch's headers both work. */
export function accountOf(
  headers: Headers | Record<string, string | string[] | undefined>,
): string {
  const value = headers instanceof Headers ? headers.get('x-account') : headers['x-account'];
  return (Array.isArray(value) ? value[0] : value) ?? 'anonymous';
}

interface GraphQLContext<Tx> {
  accountId: string;
  /** Set by the plugin while a guarded mutation runs. */
  idempotency: IdempotencyContext<Tx>;
}

interface TrpcContext {
  accountId: string;
}

export function createPayments<Tx>(guard: Guard<Tx>, options: PaymentsOptions = {}) {
  const { graphqlEndpoint = '/graphql', latencyMs = 0 } = options;

  /** Stands for the real work: write it through the guarded `tx`, as the README shows. */
  async function pay(_tx: Tx, accountId: string, amount: number) {
    await new Promise((resolve) => setTimeout(resolve, latencyMs));
    return { id: `pay_${crypto.randomUUID()}`, accountId, amount };
  }

  const yoga = createYoga({
    graphqlEndpoint,
    schema: createSchema<GraphQLContext<Tx>>({
      typeDefs: [
        idempotentDirectiveTypeDefs,
        /* GraphQL */ `
          type Payment { id: ID!, accountId: String!, amount: Int! }
          input PayInput { amount: Int!, idempotencyKey: String }
          type Query { ping: String }
          type Mutation { pay(input: PayInput!): Payment! @idempotent }
        `,
      ],
      resolvers: {
        Mutation: {
          pay: (_root, { input }: { input: { amount: number } }, ctx) =>
            pay(ctx.idempotency.tx, ctx.accountId, input.amount),
        },
      },
    }),
    context: ({ request }) => ({ accountId: accountOf(request.headers) }),
    plugins: [useIdempotency({ guard, scope: (ctx: { accountId: string }) => ctx.accountId })],
  });

  const t = initTRPC.context<TrpcContext>().create({
    errorFormatter: idempotencyErrorFormatter,
  });
  const guarded = idempotency({ guard, scope: (ctx: TrpcContext) => ctx.accountId });
  // Checked where it is built: a guarded query or an .output() before the guard throws here.
  const router = assertIdempotencySetup(
    t.router({
      pay: t.procedure
        .input(z.object({ amount: z.number().int().positive(), idempotencyKey: z.string() }))
        .concat(guarded)
        .mutation(({ ctx, input }) => pay(ctx.idempotency.tx, ctx.accountId, input.amount)),
    }),
  );

  return { yoga, router };
}

export type PaymentsApp = ReturnType<typeof createPayments>;
