/**
 * Fastify 5: tRPC through its Fastify plugin at /trpc, Yoga in a route at /graphql.
 *
 *   const app = await createFastifyApp(createPayments(guard));
 *   await app.listen({ port: 3000 });
 */
import {
  type CreateFastifyContextOptions,
  type FastifyTRPCPluginOptions,
  fastifyTRPCPlugin,
} from '@trpc/server/adapters/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { accountOf, type PaymentsApp } from './payments.js';

export async function createFastifyApp({ yoga, router }: PaymentsApp): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router,
      // A Fastify reply is not a Node response: hand the middleware the one underneath
      // (`res.raw`). Headers set on it go out with the reply Fastify sends.
      createContext: ({ req, res, info }: CreateFastifyContextOptions) => ({
        req,
        res: res.raw,
        info,
        accountId: accountOf(req.headers),
      }),
    } satisfies FastifyTRPCPluginOptions<PaymentsApp['router']>['trpcOptions'],
  });
  app.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    // Yoga answers with a fetch Response: copy its status, headers and body to the reply.
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply);
      for (const [name, value] of response.headers) reply.header(name, value);
      reply.status(response.status);
      return reply.send(response.body);
    },
  });
  return app;
}
