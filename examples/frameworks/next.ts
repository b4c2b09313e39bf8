/**
 * Next.js App Router: route handlers are fetch handlers, so tRPC's fetch adapter and Yoga
 * plug in as they are. Create the app once, in a module of your own (`lib/payments.ts`):
 *
 *   export const handlers = nextRouteHandlers(
 *     createPayments(guard, { graphqlEndpoint: '/api/graphql' }),
 *   );
 *
 * then export the handlers from two route files:
 *
 *   // app/api/trpc/[trpc]/route.ts
 *   import { handlers } from '@/lib/payments';
 *   export const { GET, POST } = handlers.trpc;
 *
 *   // app/api/graphql/route.ts
 *   import { handlers } from '@/lib/payments';
 *   export const { GET, POST, OPTIONS } = handlers.graphql;
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { accountOf, type PaymentsApp } from './payments.js';

type RouteHandler = (request: Request) => Promise<Response>;

export function nextRouteHandlers({ yoga, router }: PaymentsApp) {
  const trpc: RouteHandler = (req) =>
    fetchRequestHandler({
      endpoint: '/api/trpc',
      req,
      router,
      // `resHeaders` is where the middleware puts Idempotent-Replayed and Retry-After.
      createContext: ({ req, resHeaders, info }) => ({
        req,
        resHeaders,
        info,
        accountId: accountOf(req.headers),
      }),
    });
  const graphql: RouteHandler = async (request) => yoga.handleRequest(request, {});
  return {
    trpc: { GET: trpc, POST: trpc },
    graphql: { GET: graphql, POST: graphql, OPTIONS: graphql },
  };
}
