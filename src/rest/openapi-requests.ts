import {
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
} from 'graphql';
import type { z } from 'zod';
import { ZOD_EXTENSION } from '../graphql/zod-input.js';
import { describeBytes } from '../uploads.js';
import { type JsonSchema, jsonSchemaOf, nonNull, SCALARS } from './openapi-parts.js';
import type { Operation } from './operations.js';
import { snakeCase } from './rest-routes.js';
import type { RestRoute } from './route-table.js';

// What a route of the document takes: its parameters and its body, each from the zod schema its
// service checks it with.

/** The route's path, query and header parameters, each with the value of the recorded request. */
export function routeParameters(
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
export function requestBody(
  route: RestRoute,
  schema: JsonSchema,
  example: Record<string, unknown> | undefined,
) {
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
export function bodySchema(route: RestRoute, type: GraphQLInputType): JsonSchema {
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
