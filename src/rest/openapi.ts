import type { GraphQLSchema } from 'graphql';
import type { ApiExamples } from './openapi-examples.js';
import { overviewMarkdown } from './openapi-overview.js';
import {
  COMMON_HEADERS,
  declaredErrorCodes,
  errorResponses,
  RESPONSE_HEADERS,
  responseHeaders,
} from './openapi-parts.js';
import { bodySchema, requestBody, routeParameters } from './openapi-requests.js';
import { responseSchema, withRequest } from './openapi-success-body.js';
import type { OperationRegistry } from './operations.js';
import type { RestRoute } from './route-table.js';

/**
 * The OpenAPI document of /v1, derived from the same route table and GraphQL operations that
 * serve the requests: request bodies and parameters from the zod schemas the input types and
 * arguments were made from (what the service enforces), responses from the selections, and
 * examples from exchanges recorded with a real Tern.
 */
export function buildOpenApi(
  routes: readonly RestRoute[],
  registry: OperationRegistry,
  schema: GraphQLSchema,
  examples: ApiExamples,
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const operationId = route.operationId ?? route.operation;
    if (operationIds.has(operationId))
      throw new Error(
        `operationId ${operationId} is used twice: give ${route.path} an operationId of its own`,
      );
    operationIds.add(operationId);
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = describeRoute(route, operationId, registry, schema, examples);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tern SMS gateway', version: 'v1', description: overviewMarkdown(examples) },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      headers: RESPONSE_HEADERS,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT or API key',
          description:
            'A login token from POST /v1/auth/login (a JWT, 24 hours) or an API key (tern_live_…, from POST /v1/api-keys)',
        },
      },
    },
  };
}

/** One operation of the document: its parameters, body, success and error responses. */
function describeRoute(
  route: RestRoute,
  operationId: string,
  registry: OperationRegistry,
  schema: GraphQLSchema,
  examples: ApiExamples,
) {
  const operation = registry.get(route.operation);
  const recorded = examples.operations[operationId];
  const bodyType = route.body ? operation.variableTypes.get(route.body) : undefined;
  const parameters = routeParameters(route, operation, schema, recorded?.parameters ?? {});
  const success = withRequest(responseSchema(operation, schema), route.omitNull, route.responseHeaders);
  return {
    operationId,
    summary: route.summary,
    description: route.description,
    tags: [route.path.split('/')[2] ?? 'v1'],
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(bodyType ? { requestBody: requestBody(route, bodySchema(route, bodyType), recorded?.request) } : {}),
    responses: {
      [route.status]: {
        description: 'Success',
        headers: { ...COMMON_HEADERS, ...responseHeaders(route.responseHeaders ?? {}) },
        content: {
          'application/json': { schema: success, ...(recorded ? { example: recorded.response } : {}) },
        },
      },
      ...errorResponses(route, declaredErrorCodes(operation, schema), {
        ...examples.shared,
        ...recorded?.errors,
      }),
    },
  };
}
