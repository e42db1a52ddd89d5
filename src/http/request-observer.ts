import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ServerContext } from '../graphql/yoga.js';
import { type Metrics, statusClass } from '../metrics/metrics.js';

/** A GraphQL operation a request ran, as the metrics name it. */
export interface ObservedOperation {
  type: string;
  /** One of Tern's own operation names; `other` or `anonymous` for the rest. */
  name: string;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
// A subscription's request lasts as long as the subscription: its duration says nothing of speed.
const STREAMED = /^(text\/event-stream|multipart\/mixed)/;

const operationsOf = new WeakMap<FastifyRequest, ObservedOperation[]>();

/**
 * Records the operations /graphql runs on the request that carried them (a batch carries
 * several). Operation names are the client's choice, so only Tern's own (the named operations
 * of schema/operations, which the /v1 routes and the typed client use) become label values.
 */
export function graphqlOperationObserver(knownNames: ReadonlySet<string>): Plugin<ServerContext> {
  const note = (
    request: FastifyRequest,
    document: DocumentNode,
    operationName: string | null | undefined,
  ) => {
    const operation = getOperationAST(document, operationName);
    const name = operation?.name?.value;
    const observed = {
      type: operation?.operation ?? 'unknown',
      name: name === undefined ? 'anonymous' : knownNames.has(name) ? name : 'other',
    };
    operationsOf.set(request, [...(operationsOf.get(request) ?? []), observed]);
  };
  return {
    onExecute({ args }) {
      note(args.contextValue.req, args.document, args.operationName);
    },
    onSubscribe({ args }) {
      note(args.contextValue.req, args.document, args.operationName);
    },
  };
}

export interface RequestObserverOptions {
  metrics: Metrics;
  /** The GraphQL operation each /v1 route runs, by `METHOD route-template`. */
  restOperations: ReadonlyMap<string, ObservedOperation>;
  /** The account a request was authenticated as, when it was. */
  accountOf: (request: FastifyRequest) => string | null | undefined;
}

/**
 * One place for what every answered request leaves behind: its metrics (by route template, never
 * the URL) and one log line, at error level for a 5xx and info otherwise. Health probes are
 * counted but not logged: an orchestrator polls them every few seconds.
 */
export function observeRequests(
  app: FastifyInstance,
  { metrics, restOperations, accountOf }: RequestObserverOptions,
): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const streamed = STREAMED.test(String(reply.getHeader('content-type') ?? ''));
    const rest = restOperations.get(`${request.method} ${route}`);
    const operations = rest
      ? [{ ...rest, transport: 'v1' }]
      : (operationsOf.get(request) ?? []).map((operation) => ({ ...operation, transport: 'graphql' }));
    countRequest(metrics, request, reply, { route, streamed, operations });
    if (!route.startsWith('/health')) logRequest(request, reply, route, operations, accountOf(request));
  });
}

type CountedOperation = ObservedOperation & { transport: string };

/** The request's HTTP series and, for each GraphQL operation it ran, the operation's. A stream's length is not a duration. */
function countRequest(
  metrics: Metrics,
  request: FastifyRequest,
  reply: FastifyReply,
  { route, streamed, operations }: { route: string; streamed: boolean; operations: CountedOperation[] },
): void {
  const method = KNOWN_METHODS.has(request.method) ? request.method : 'other';
  const labels = { method, route, status_class: statusClass(reply.statusCode) };
  const seconds = reply.elapsedTime / 1000;
  metrics.httpRequests.inc(labels);
  if (!streamed) metrics.httpDuration.observe(labels, seconds);
  for (const { transport, type, name } of operations) {
    metrics.graphqlOperations.inc({ transport, type, operation: name, status_class: labels.status_class });
    if (!streamed) metrics.graphqlDuration.observe({ transport, type, operation: name }, seconds);
  }
}

/** One line per request: at error level for a 5xx, info otherwise. */
function logRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  operations: CountedOperation[],
  account: string | null | undefined,
): void {
  const status = reply.statusCode;
  const line = {
    method: request.method,
    route,
    path: request.url.split('?')[0],
    status,
    ms: Math.round(reply.elapsedTime),
    account: account ?? undefined,
    ...(operations.length > 0 ? { operations: operations.map((operation) => operation.name) } : {}),
  };
  if (status >= 500) request.log.error(line, 'request');
  else request.log.info(line, 'request');
}
