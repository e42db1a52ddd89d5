import { randomUUID } from 'node:crypto';
import helmet from '@fastify/helmet';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { WorkerCarrierHealth } from '../carriers/carrier-health.js';
import type { Dependencies } from '../deps.js';
import { createGraphQLServer } from '../graphql/yoga.js';
import { buildOpenApi } from '../rest/openapi.js';
import { OperationRegistry } from '../rest/operations.js';
import { registerRestRoutes } from '../rest/rest-routes.js';
import { routes } from '../rest/route-table.js';
import type { Services } from '../services.js';
import { answerUnreadableRequest, handleHttpError, sendError } from './error-response.js';
import { checkHealth } from './health.js';
import { acceptMultipart } from './multipart.js';
import { acceptStrictJson } from './json-body.js';
import { registerRateLimit } from './rate-limit.js';
import { authenticate, createRequestContext } from './request-context.js';

export const MAX_JSON_BODY_BYTES = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 60_000;
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const newRequestId = () => `req_${randomUUID().replaceAll('-', '')}`;

export interface HttpServerOptions {
  deps: Dependencies;
  services: Services;
  schema: GraphQLSchema;
  /** Every worker's carrier (bind state, window, errors), for /health. */
  carriers: () => Promise<WorkerCarrierHealth[]>;
}

/** The API process: GraphQL at /graphql, the /v1 layer, /health, one request pipeline for all. */
export function createHttpServer({ deps, services, schema, carriers }: HttpServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: MAX_JSON_BODY_BYTES,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request' }),
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : newRequestId();
    },
    clientErrorHandler: (error, socket) => answerUnreadableRequest(error, socket, newRequestId()),
    // A path that does not decode (`%FF`) is refused by the router before any hook runs.
    frameworkErrors: (error, request, reply) => sendError(reply.header('x-request-id', request.id), 'bad_request', `The URL cannot be read: ${error.message}`),
    forceCloseConnections: 'idle',
    // A client that trickles its request (slowloris) is cut off rather than holding a socket.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Behind a proxy the client is in X-Forwarded-For; trusting it otherwise would let anyone pick their address.
    trustProxy: deps.config.trustProxy,
    return503OnClosing: true,
  });

  const createContext = (request: Parameters<typeof createRequestContext>[0]) => createRequestContext(request, services.tokens);

  // The API serves JSON, and GraphiQL its own page with inline scripts: the headers that matter
  // here are the transport and framing ones; a content security policy would only break GraphiQL.
  void app.register(helmet, { contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });
  // JSON is the only body the API reads (multipart uploads excepted); plain text is refused.
  app.removeContentTypeParser('text/plain');
  acceptStrictJson(app);
  acceptMultipart(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerRateLimit(app, {
    redis: deps.redis,
    prefix: deps.config.redisPrefix,
    max: deps.config.rateLimitMax,
    windowSeconds: deps.config.rateLimitWindowSeconds,
    // Probes poll them; they read nothing of an account's.
    uncounted: (route) => route === '/health' || route.startsWith('/health/'),
    identify: (request) => {
      const { accountId } = authenticate(request, services.tokens);
      return accountId ? `account:${accountId}` : `address:${request.ip}`;
    },
  });
  app.setErrorHandler(handleHttpError);
  app.setNotFoundHandler((request, reply) => sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));

  app.get('/health', async (_request, reply) => {
    const [report, workers] = await Promise.all([checkHealth(deps), carriers()]);
    // The carriers' state informs; it does not make the API unhealthy (sends wait and retry).
    return reply.status(report.status === 'ok' ? 200 : 503).send({ ...report, carriers: workers, request: reply.request.id });
  });

  const graphql = createGraphQLServer({
    schema,
    logger: deps.logger,
    graphiql: deps.config.graphiql,
    introspection: deps.config.introspection,
    production: deps.config.env === 'production',
    maxMultipartFieldBytes: MAX_JSON_BODY_BYTES,
    createContext,
  });
  app.route({
    url: graphql.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    // File uploads: Yoga reads them through graphql-upload-minimal (graphql/yoga.ts).
    config: { multipart: true },
    handler: async (request, reply) => {
      const response = await graphql.handleNodeRequestAndResponse(request, reply, { req: request, reply });
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      reply.status(response.status);
      // Streamed answers (event streams, incremental delivery) go out as streams; every other is
      // one body, written at once rather than as a chunked stream of several writes.
      const contentType = response.headers.get('content-type') ?? '';
      if (contentType.startsWith('text/event-stream') || contentType.startsWith('multipart/')) return reply.send(response.body);
      return reply.send(Buffer.from(await response.arrayBuffer()));
    },
  });

  const registry = OperationRegistry.fromDirectory(schema);
  registerRestRoutes(app, routes, registry, schema, createContext);
  const openApi = buildOpenApi(routes, registry, schema);
  app.get('/v1/openapi.json', async () => openApi);

  return app;
}
