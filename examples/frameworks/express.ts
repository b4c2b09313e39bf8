/**
 * Express 5: tRPC through its Express adapter at /trpc, Yoga at /graphql.
 *
 *   const app = createExpressApp(createPayments(guard));
 *   app.listen(3000);
 */
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express from 'express';
import { accountOf, type PaymentsApp } from './payments.js';

export function createExpressApp({ yoga, router }: PaymentsApp): express.Express {
  const app = express();
  app.use(
    '/trpc',
    createExpressMiddleware({
      router,
      // Hand req, res and info on: the middleware reads Idempotency-Key from req, sets
      // Idempotent-Replayed and Retry-After with res.setHeader, and checks batches with info.
      createContext: ({ req, res, info }) => ({
        req,
        res,
        info,
        accountId: accountOf(req.headers),
      }),
    }),
  );
  // Yoga is a Node request handler itself; its answers carry the idempotency headers.
  app.use(yoga.graphqlEndpoint, (req, res) => yoga(req, res));
  return app;
}
