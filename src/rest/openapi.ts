import {
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  type InlineFragmentNode,
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
import { ZOD_EXTENSION } from '../graphql/zod-input.js';
import { describeBytes } from '../uploads.js';
import type { ApiExamples } from './openapi-examples.js';
import { overviewMarkdown } from './openapi-overview.js';
import {
  COMMON_HEADERS,
  declaredErrorCodes,
  errorResponses,
  type JsonSchema,
  jsonSchemaOf,
  nonNull,
  RESPONSE_HEADERS,
  responseHeaders,
} from './openapi-parts.js';
import type { Operation, OperationRegistry } from './operations.js';
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

/** The route's path, query and header parameters, each with the value of the recorded request. */
function routeParameters(
  route: RestRoute,
  operation: Operation,
  schema: GraphQLSchema,
  recorded: Record<string, string>,
) {
  const withExample = <P extends { name: string; schema: JsonSchema }>(described: P) => {
    const value = recorded[described.name];
    if (value === undefined) return described;
    return { ...described, example: exampleOf(described.schema, value) };
  };
  const places = [
    ['path', route.params, true],
    ['query', route.query, false],
    ['header', route.headers, false],
  ] as const;
  return places.flatMap(([where, variables, required]) =>
    Object.entries(variables ?? {}).map(([name, variable]) =>
      withExample(parameter(name, where, operation, variable, required, schema)),
    ),
  );
}

/** A recorded parameter's text as its schema reads it: `per_page` 10, not "10"; a list split at its commas. */
function exampleOf(schema: JsonSchema, value: string): unknown {
  if (schema.type === 'integer') return Number(value);
  if (schema.type === 'array') return value === '' ? [] : value.split(',');
  return value;
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

/** A JSON body: the zod schema its input type was made from; every body has one. */
function bodySchema(route: RestRoute, type: GraphQLInputType): JsonSchema {
  const zod = getNamedType(type).extensions[ZOD_EXTENSION] as z.ZodType | undefined;
  if (!zod) throw new Error(`${route.method} ${route.path}: its input type was not made from a zod schema`);
  return jsonSchemaOf(zod);
}

/**
 * A parameter: the zod schema of the argument its variable feeds, which its service checks it
 * with (every query parameter has one); a path parameter is an id, as its GraphQL type says.
 */
function parameter(
  name: string,
  where: 'path' | 'query' | 'header',
  operation: Operation,
  variable: string,
  required: boolean,
  schema: GraphQLSchema,
) {
  const zod = argumentOf(operation, variable, schema)?.extensions[ZOD_EXTENSION] as z.ZodType | undefined;
  if (zod) {
    const { description, ...read } = nonNull(jsonSchemaOf(zod));
    const type = operation.variableTypes.get(variable);
    const rules = type && isEnumType(getNamedType(type)) ? inLowerCase(read) : read;
    // A list in a query parameter is written comma-separated (group_by=status,country).
    const list = rules.type === 'array' ? { style: 'form', explode: false } : {};
    return { name, in: where, required, ...(description ? { description } : {}), ...list, schema: rules };
  }
  if (where === 'query')
    throw new Error(`query parameter ${name}: its argument was not made from a zod schema`);
  const type = operation.variableTypes.get(variable);
  return { name, in: where, required, schema: type ? inputSchema(type) : { type: 'string' } };
}

/**
 * An enum's values as /v1 writes them, in lower case (the runner takes them in any case, so the
 * upper case of GraphQL still works).
 */
function inLowerCase(schema: JsonSchema): JsonSchema {
  const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);
  return {
    ...schema,
    ...(Array.isArray(schema.enum) ? { enum: schema.enum.map(lower) } : {}),
    ...(schema.default === undefined ? {} : { default: lower(schema.default) }),
    ...(schema.items ? { items: inLowerCase(schema.items as JsonSchema) } : {}),
  };
}

/** The argument of the operation's root field that the variable is passed to. */
function argumentOf(operation: Operation, variable: string, schema: GraphQLSchema) {
  const root = operation.definition.selectionSet.selections[0];
  if (root?.kind !== Kind.FIELD) return undefined;
  const node = root.arguments?.find(
    (argument) => argument.value.kind === Kind.VARIABLE && argument.value.name.value === variable,
  );
  const rootType =
    operation.definition.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  return rootType?.getFields()[root.name.value]?.args.find((arg) => arg.name === node?.name.value);
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
        const field = named.getFields()[selection.name.value];
        if (field && selection.name.value !== '__typename')
          properties[selection.alias?.value ?? selection.name.value] = outputSchema(
            field.type,
            selection.selectionSet,
            fragments,
            schema,
          );
        continue;
      }
      const fragment = fragmentBody(selection, fragments, named.name);
      if (fragment) visitSet(fragment);
    }
  };
  visitSet(selectionSet);
  return { type: 'object', properties, required: Object.keys(properties) };
}

/** The selections of a fragment (inline or named) that applies to `typeName`; undefined for one that does not. */
function fragmentBody(
  selection: InlineFragmentNode | FragmentSpreadNode,
  fragments: Map<string, FragmentDefinitionNode>,
  typeName: string,
): SelectionSetNode | undefined {
  const definition =
    selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
  const condition = definition?.typeCondition?.name.value;
  return !condition || condition === typeName ? definition?.selectionSet : undefined;
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
