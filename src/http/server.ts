import { randomUUID } from 'node:crypto';
import helmet from '@fastify/helmet';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { WorkerCarrierHealth } from '../carriers/routing/carrier-health.js';
import type { Dependencies } from '../deps.js';
import type { Context } from '../graphql/context.js';
import { createFieldRateLimits } from '../graphql/field-rate-limits.js';
import { createGraphQLServer } from '../graphql/yoga.js';
import { acceptMultipart } from '../lib/multipart.js';
import { answerUnreadableRequest, handleHttpError, sendError } from '../rest/error-response.js';
import { buildOpenApi } from '../rest/openapi.js';
import { readApiExamples } from '../rest/openapi-examples.js';
import { OperationRegistry } from '../rest/operations.js';
import { registerRestRoutes } from '../rest/rest-routes.js';
import { routes } from '../rest/route-table.js';
import type { Services } from '../services.js';
import { registerApiDocs } from './api-docs.js';
import { CARRIER_CALLBACK_ROUTES, registerCarrierCallbacks } from './carrier-callback-route.js';
import { registerDashboard } from './dashboard.js';
import { checkHealth, publicHealthBody, type Readiness } from './health.js';
import { acceptStrictJson } from './json-body.js';
import { registerRateLimit } from './rate-limit.js';
import { authenticate, authenticatedCaller, createRequestContext, knownAccount } from './request-context.js';
import { graphqlOperationObserver, type ObservedOperation, observeRequests } from './request-observer.js';

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
  /** For GET /health/ready. */
  readiness: Readiness;
  /** True from the start of a shutdown. */
  shuttingDown: () => boolean;
}

/**
 * From the start of a shutdown until the requests that began before it are answered, the
 * listener stays open: new requests get 503 `service_unavailable` (the probes answer, readiness
 * with 503), so a load balancer sees the instance leave rather than connections refused under
 * it. Then Fastify closes the listener. Idle, that is at once. Every answer given during the
 * shutdown closes its connection, so no keep-alive connection holds the close up.
 */
function drainOnShutdown(app: FastifyInstance, shuttingDown: () => boolean): void {
  const inFlight = new Set<FastifyRequest>();
  let drained: (() => void) | null = null;
  const settle = async (request: FastifyRequest) => {
    if (inFlight.delete(request) && inFlight.size === 0) drained?.();
  };
  app.addHook('onRequest', async (request, reply) => {
    if (!shuttingDown()) {
      inFlight.add(request);
      // A streamed answer (an event stream) that its client abandons ends with neither Fastify's
      // onResponse nor onRequestAbort; the response's 'close' comes in every case.
      reply.raw.once('close', () => void settle(request));
      return;
    }
    if (request.url.startsWith('/health')) return;
    return sendError(
      reply.header('retry-after', '1'),
      'service_unavailable',
      'Tern is shutting down; retry, another instance will answer',
    );
  });
  app.addHook('onSend', async (_request, reply) => {
    if (shuttingDown()) reply.header('connection', 'close');
  });
  app.addHook('onResponse', settle);
  app.addHook('onRequestAbort', settle);
  app.addHook('preClose', async () => {
    if (inFlight.size === 0) return;
    await new Promise<void>((resolve) => {
      drained = resolve;
    });
  });
}

/**
 * Aborts when the response's connection closes. Fastify hands Yoga's event stream a body that it
 * cancels, if the client leaves before the first byte, without that cancel ever reaching the
 * stream's source; the response's 'close' comes in every case (and once the answer is complete).
 */
function connectionClosed(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const closed = new AbortController();
  if (request.raw.socket.destroyed) closed.abort();
  else reply.raw.once('close', () => closed.abort());
  return closed.signal;
}

/** Logs and counts each request, a /v1 route under the GraphQL operation it runs. */
function observeApiRequests(
  app: FastifyInstance,
  deps: Dependencies,
  services: Services,
  registry: OperationRegistry,
): void {
  const restOperations = new Map<string, ObservedOperation>(
    routes.map((route) => {
      const operation = registry.get(route.operation);
      return [
        `${route.method} ${route.path}`,
        { type: operation.definition.operation, name: operation.name },
      ];
    }),
  );
  observeRequests(app, {
    metrics: deps.metrics,
    restOperations,
    // A request refused by its account's budget before any lookup is logged with that account.
    accountOf: (request) => {
      const caller = authenticatedCaller(request);
      return caller ? caller.accountId : knownAccount(request, services.authenticator);
    },
  });
}

/** The API process: GraphQL at /graphql, the /v1 layer, /health, one request pipeline for all. */
export function createHttpServer({
  deps,
  services,
  schema,
  carriers,
  readiness,
  shuttingDown,
}: HttpServerOptions): FastifyInstance {
  const app = createFastify(deps);

  const fieldRateLimits = createFieldRateLimits(deps);
  const createContext = async (request: FastifyRequest, reply: FastifyReply): Promise<Context> => ({
    ...(await createRequestContext(request, services.authenticator)),
    services,
    fieldRateLimits,
    prisma: deps.prisma,
    connectionClosed: connectionClosed(request, reply),
  });

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
  drainOnShutdown(app, shuttingDown);
  const registry = OperationRegistry.fromDirectory(schema);
  observeApiRequests(app, deps, services, registry);
  registerRateLimit(app, {
    redis: deps.redis,
    prefix: deps.config.redisPrefix,
    max: deps.config.rateLimitMax,
    windowSeconds: deps.config.rateLimitWindowSeconds,
    metrics: deps.metrics,
    // Probes poll them; they read nothing of an account's.
    // Carrier callbacks are verified, and refused ones counted, by their own route.
    uncounted: (route) =>
      route === '/health' || route.startsWith('/health/') || CARRIER_CALLBACK_ROUTES.includes(route),
    // A login token and an API key of one account share the account's budget.
    knownAccount: (request) => knownAccount(request, services.authenticator),
    lookUpAccount: async (request) => (await authenticate(request, services.authenticator)).accountId,
  });
  app.setErrorHandler(handleHttpError);
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`),
  );

  registerHealth(app, { deps, carriers, readiness });
  registerCarrierCallbacks(app, { services });

  registerGraphql(app, { deps, schema, createContext, operations: registry.names() });

  registerRestRoutes(app, routes, registry, schema, createContext);
  const openApi = buildOpenApi(routes, registry, schema, readApiExamples());
  app.get('/v1/openapi.json', async () => openApi);
  registerApiDocs(app);
  if (deps.config.dashboard) registerDashboard(app);

  return app;
}

function createFastify(deps: Dependencies): FastifyInstance {
  return Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: MAX_JSON_BODY_BYTES,
    requestIdHeader: false,
    // One line per request, written by observeRequests once the answer is out.
    logController: new LogController({ requestIdLogLabel: 'request', disableRequestLogging: true }),
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : newRequestId();
    },
    clientErrorHandler: (error, socket) => answerUnreadableRequest(error, socket, newRequestId()),
    // A path that does not decode (`%FF`) is refused by the router before any hook runs.
    frameworkErrors: (error, request, reply) =>
      sendError(
        reply.header('x-request-id', request.id),
        'bad_request',
        `The URL cannot be read: ${error.message}`,
      ),
    forceCloseConnections: 'idle',
    // A client that trickles its request (slowloris) is cut off rather than holding a socket.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Behind a proxy the client is in X-Forwarded-For; trusting it otherwise would let anyone pick their address.
    trustProxy: deps.config.trustProxy,
    // Tern answers during a shutdown itself (see drainOnShutdown): in its own error format, and its probes still answer.
    return503OnClosing: false,
  });
}

function registerHealth(
  app: FastifyInstance,
  { deps, carriers, readiness }: Pick<HttpServerOptions, 'deps' | 'carriers' | 'readiness'>,
): void {
  app.get('/health', async (_request, reply) => {
    const [report, workers] = await Promise.all([checkHealth(deps), carriers()]);
    // The carriers' state informs; it does not make the API unhealthy (sends wait and retry).
    return reply
      .status(report.status === 'ok' ? 200 : 503)
      .send({ ...publicHealthBody(report, workers), request: reply.request.id });
  });
  // For an orchestrator: live while the process answers at all; ready while it should get traffic.
  app.get('/health/live', async (_request, reply) => reply.send({ status: 'ok', request: reply.request.id }));
  app.get('/health/ready', async (_request, reply) => {
    const report = await readiness.check();
    return reply.status(report.status === 'ok' ? 200 : 503).send({ ...report, request: reply.request.id });
  });
}

/** GraphQL at Yoga's endpoint, answered through Fastify's reply. */
function registerGraphql(
  app: FastifyInstance,
  {
    deps,
    schema,
    createContext,
    operations,
  }: {
    deps: Dependencies;
    schema: GraphQLSchema;
    createContext: (request: FastifyRequest, reply: FastifyReply) => Promise<Context>;
    operations: Iterable<string>;
  },
): void {
  const graphql = createGraphQLServer({
    schema,
    logger: deps.logger,
    graphiql: deps.config.graphiql,
    introspection: deps.config.introspection,
    production: deps.config.env === 'production',
    maxMultipartFieldBytes: MAX_JSON_BODY_BYTES,
    createContext,
    observeOperations: graphqlOperationObserver(new Set(operations)),
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
      if (contentType.startsWith('text/event-stream') || contentType.startsWith('multipart/'))
        return reply.send(response.body);
      // Yoga's answer is already a string; read as text, it is sent as it is rather than encoded
      // to an ArrayBuffer and copied into a Buffer.
      return reply.send(await response.text());
    },
  });
}
