import {
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { z } from 'zod';
import { describeBytes } from '../uploads.js';
import type { ApiExamples } from './openapi-examples.js';
import { overviewMarkdown } from './openapi-overview.js';
import {
  COMMON_HEADERS,
  declaredErrorCodes,
  errorResponses,
  nonNull,
  RESPONSE_HEADERS,
  responseHeaders,
} from './openapi-parts.js';
import type { Operation, OperationRegistry } from './operations.js';
import { type JsonSchema, jsonSchemaOf, type RequestSchemas } from './request-schemas.js';
import { snakeCase } from './rest-routes.js';
import type { RestRoute } from './route-table.js';

const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

/**
 * The OpenAPI document of /v1, derived from the same route table and GraphQL operations that
 * serve the requests: request bodies from the input types, responses from the selections, and
 * examples from exchanges recorded with a real Tern.
 */
export function buildOpenApi(
  routes: readonly RestRoute[],
  registry: OperationRegistry,
  schema: GraphQLSchema,
  requests: RequestSchemas,
  examples: ApiExamples,
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const operation = registry.get(route.operation);
    const operationId = route.operationId ?? route.operation;
    if (operationIds.has(operationId))
      throw new Error(
        `operationId ${operationId} is used twice: give ${route.path} an operationId of its own`,
      );
    operationIds.add(operationId);
    const recorded = examples.operations[operationId];
    // The recorded request's value, as the parameter's type reads it (`per_page` 10, not "10").
    const withExample = <P extends { name: string; schema: JsonSchema }>(described: P) => {
      const value = recorded?.parameters?.[described.name];
      if (value === undefined) return described;
      return { ...described, example: described.schema.type === 'integer' ? Number(value) : value };
    };
    const querySchemas = { ...requests.queries['*'], ...requests.queries[route.operation] };
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [
      ...Object.entries(route.params ?? {}).map(([name, variable]) =>
        withExample(parameter(name, 'path', operation, variable, true)),
      ),
      ...Object.entries(route.query ?? {}).map(([name, variable]) =>
        withExample(
          zodParameter(name, 'query', querySchemas[variable]) ??
            parameter(name, 'query', operation, variable, false),
        ),
      ),
      ...Object.entries(route.headers ?? {}).map(([name, variable]) =>
        withExample(
          zodParameter(name, 'header', requests.headers[variable]) ??
            parameter(name, 'header', operation, variable, false),
        ),
      ),
    ];
    const bodyType = route.body ? operation.variableTypes.get(route.body) : undefined;
    const bodyZod = bodyType ? requests.bodies.get(getNamedType(bodyType).name) : undefined;
    const success = withRequest(responseSchema(operation, schema), route.omitNull, route.responseHeaders);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId,
      summary: route.summary,
      description: route.description,
      tags: [route.path.split('/')[2] ?? 'v1'],
      ...(route.public ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(bodyType
        ? {
            requestBody: requestBody(
              route,
              bodyZod ? jsonSchemaOf(bodyZod) : inputSchema(bodyType),
              recorded?.request,
            ),
          }
        : {}),
      responses: {
        [route.status]: {
          description: 'Success',
          headers: { ...COMMON_HEADERS, ...responseHeaders(route.responseHeaders ?? {}) },
          content: {
            'application/json': {
              schema: success,
              ...(recorded ? { example: recorded.response } : {}),
            },
          },
        },
        ...errorResponses(route, declaredErrorCodes(operation, schema), {
          ...examples.shared,
          ...recorded?.errors,
        }),
      },
    };
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

/** JSON, or for an upload route the multipart form: the file part beside the body's fields. */
function requestBody(route: RestRoute, schema: JsonSchema, example: Record<string, unknown> | undefined) {
  const body = { ...schema, additionalProperties: false };
  const recorded = example ? { example } : {};
  if (!route.upload)
    return { required: true, content: { 'application/json': { schema: body, ...recorded } } };
  const { field, maxBytes } = route.upload;
  const form = {
    ...body,
    properties: {
      [field]: { type: 'string', format: 'binary', description: `At most ${describeBytes(maxBytes)}` },
      ...(schema.properties as JsonSchema),
    },
    required: [field, ...((schema.required as string[]) ?? [])],
  };
  return { required: true, content: { 'multipart/form-data': { schema: form, ...recorded } } };
}

/** A parameter whose rules are the zod schema its service checks it with (its bounds, its description). */
function zodParameter(name: string, where: 'query' | 'header', zod: z.ZodType | undefined) {
  if (!zod) return undefined;
  const { description, ...schema } = nonNull(jsonSchemaOf(zod));
  return { name, in: where, required: false, ...(description ? { description } : {}), schema };
}

function parameter(
  name: string,
  where: 'path' | 'query' | 'header',
  operation: Operation,
  variable: string,
  required: boolean,
) {
  const type = operation.variableTypes.get(variable);
  return { name, in: where, required, schema: type ? inputSchema(type) : { type: 'string' } };
}

/** The success body: the operation's fields, those left out when null no longer required, and `request`. */
function withRequest(
  schema: JsonSchema,
  omitNull: readonly string[] = [],
  headers: Record<string, string> = {},
): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries({
      ...(schema.properties as Record<string, JsonSchema>),
      request: { type: 'string' },
    }).filter(([name]) => !(name in headers)),
  );
  const required = ((schema.required as string[]) ?? []).filter(
    (name) => !omitNull.includes(name) && !(name in headers),
  );
  return { ...schema, properties, required: [...required, 'request'] };
}

function inputSchema(type: GraphQLInputType): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return { type: 'array', items: inputSchema(inner.ofType) };
  if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    return {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        fields.map((field) => [
          snakeCase(field.name),
          { ...inputSchema(field.type), ...(field.description ? { description: field.description } : {}) },
        ]),
      ),
      required: fields.filter((field) => isNonNullType(field.type)).map((field) => snakeCase(field.name)),
    };
  }
  if (isEnumType(inner)) return { type: 'string', enum: inner.getValues().map((value) => value.name) };
  return SCALARS[inner.name] ?? { type: 'string' };
}

function responseSchema(operation: Operation, schema: GraphQLSchema): JsonSchema {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of operation.document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const rootType =
    operation.definition.operation === 'query' ? schema.getQueryType() : schema.getMutationType();
  const [root] = operation.definition.selectionSet.selections;
  if (!rootType || root?.kind !== Kind.FIELD || !root.selectionSet) return { type: 'object' };
  const field = rootType.getFields()[root.name.value];
  if (!field) return { type: 'object' };
  // The success body is the non-error member of the field's result union.
  const named = getNamedType(field.type);
  const errorInterface = schema.getType('Error');
  const successType = isObjectType(named)
    ? named
    : schema
        .getPossibleTypes(named as never)
        .find((type) => !type.getInterfaces().some((i) => i === errorInterface));
  if (!successType) return { type: 'object' };
  return selectionSchema(successType, root.selectionSet, fragments, schema);
}

function selectionSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
): JsonSchema {
  const named = getNamedType(type);
  if (!isObjectType(named)) return { type: 'object' };
  const properties: Record<string, JsonSchema> = {};
  const visitSet = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__typename') continue;
        const field = named.getFields()[selection.name.value];
        if (field)
          properties[selection.alias?.value ?? selection.name.value] = outputSchema(
            field.type,
            selection.selectionSet,
            fragments,
            schema,
          );
      } else {
        const condition =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection.typeCondition?.name.value
            : fragments.get(selection.name.value)?.typeCondition.name.value;
        const body =
          selection.kind === Kind.INLINE_FRAGMENT
            ? selection.selectionSet
            : fragments.get(selection.name.value)?.selectionSet;
        if (body && (!condition || condition === named.name)) visitSet(body);
      }
    }
  };
  visitSet(selectionSet);
  return { type: 'object', properties, required: Object.keys(properties) };
}

function outputSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
): JsonSchema {
  const nullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  let result: JsonSchema;
  if (isListType(inner))
    result = { type: 'array', items: outputSchema(inner.ofType, selectionSet, fragments, schema) };
  else if (isEnumType(inner))
    result = { type: 'string', enum: inner.getValues().map((value) => value.value as string) };
  else if (isScalarType(inner)) result = SCALARS[inner.name] ?? { type: 'string' };
  else result = selectionSet ? selectionSchema(inner, selectionSet, fragments, schema) : { type: 'object' };
  return nullable ? { ...result, type: [result.type, 'null'] } : result;
}
