import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Dependencies } from '../deps.js';
import { createGraphQLServer } from '../graphql/yoga.js';
import { buildOpenApi } from '../rest/openapi.js';
import { OperationRegistry } from '../rest/operations.js';
import { registerRestRoutes } from '../rest/rest-routes.js';
import { routes } from '../rest/route-table.js';
import type { Services } from '../services.js';
import { handleHttpError, sendError } from './error-response.js';
import { checkHealth } from './health.js';
import { createRequestContext } from './request-context.js';

export const MAX_JSON_BODY_BYTES = 1024 * 1024;
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export interface HttpServerOptions {
  deps: Dependencies;
  services: Services;
  schema: GraphQLSchema;
}

/** The API process: GraphQL at /graphql, the /v1 layer, /health, one request pipeline for all. */
export function createHttpServer({ deps, services, schema }: HttpServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: MAX_JSON_BODY_BYTES,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request' }),
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replaceAll('-', '')}`;
    },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  const createContext = (request: Parameters<typeof createRequestContext>[0]) => createRequestContext(request, services.tokens);

  // JSON is the only body the API reads (multipart uploads excepted); plain text is refused.
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setErrorHandler(handleHttpError);
  app.setNotFoundHandler((request, reply) => sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));

  app.get('/health', async (_request, reply) => {
    const report = await checkHealth(deps);
    return reply.status(report.status === 'ok' ? 200 : 503).send({ ...report, request: reply.request.id });
  });

  const graphql = createGraphQLServer({
    schema,
    logger: deps.logger,
    graphiql: deps.config.graphiql,
    introspection: deps.config.introspection,
    createContext,
  });
  app.route({
    url: graphql.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (request, reply) => {
      const response = await graphql.handleNodeRequestAndResponse(request, reply, { req: request, reply });
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      reply.status(response.status);
      return reply.send(response.body);
    },
  });

  const registry = OperationRegistry.fromDirectory(schema);
  registerRestRoutes(app, routes, registry, schema, createContext);
  const openApi = buildOpenApi(routes, registry, schema);
  app.get('/v1/openapi.json', async () => openApi);

  return app;
}
