import { type GraphQLSchema, getNamedType, isUnionType, Kind } from 'graphql';
import { z } from 'zod';
import {
  ERRORS,
  type ErrorCode,
  FIELD_ERROR_CODES,
  type FieldErrorCode,
  ISSUES,
  MAX_ISSUE_DETAILS,
} from '../errors.js';
import type { Operation } from './operations.js';
import { snakeCase } from './rest-routes.js';
import type { RestRoute } from './route-table.js';

/** The result-union members of Tern's schema that are expected failures, by their error code. */
const CODE_BY_ERROR_TYPE: ReadonlyMap<string, FieldErrorCode> = new Map(
  FIELD_ERROR_CODES.map((code) => [ERRORS[code].type, code]),
);

/** The expected failures the operation's field declares: the error members of its result union. */
export function declaredErrorCodes(operation: Operation, schema: GraphQLSchema): Set<ErrorCode> {
  const root =
    operation.definition.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const selection = operation.definition.selectionSet.selections[0];
  const field = selection?.kind === Kind.FIELD ? root?.getFields()[selection.name.value] : undefined;
  const result = field ? getNamedType(field.type) : undefined;
  const members = result && isUnionType(result) ? result.getTypes() : [];
  return new Set(members.flatMap((member) => CODE_BY_ERROR_TYPE.get(member.name) ?? []));
}

/**
 * The error codes a route can answer with: the failures its GraphQL field declares, and those
 * that come from what it takes (body, path, token) or can happen to any request.
 */
export function errorCodesOf(route: RestRoute, declared: ReadonlySet<ErrorCode>): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if (route.body) codes.push('bad_request', 'payload_too_large');
  if (!route.public) codes.push('unauthorized');
  if (route.loginTokenOnly) codes.push('forbidden');
  for (const code of FIELD_ERROR_CODES) {
    // An id in the path that names nothing of the account's is a 404 whatever the field declares,
    // and any route refuses a query parameter it does not take, by name.
    const implied = (code === 'not_found' && route.params) || code === 'validation_error';
    if (declared.has(code) || implied) codes.push(code);
  }
  // Any route: a failure of the service's own (answered without details), or a shutdown under way.
  codes.push('rate_limited', 'internal_error', 'service_unavailable');
  return codes;
}

/** Tern's error body, with the codes it may carry. */
function errorSchema(codes: string[]): JsonSchema {
  return {
    type: 'object',
    required: ['error', 'request'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', enum: codes },
          message: { type: 'string' },
          details: {
            type: 'array',
            description: `Each bad field once; at most ${MAX_ISSUE_DETAILS}, the message saying when there were more`,
            maxItems: MAX_ISSUE_DETAILS,
            items: {
              type: 'object',
              required: ['field', 'issue'],
              properties: {
                field: { type: 'string' },
                issue: { type: 'string', enum: Object.keys(ISSUES) },
              },
            },
          },
        },
      },
      request: { type: 'string' },
    },
  };
}

/** Each error status the route can answer with, the codes behind it, and a recorded answer of each code. */
export function errorResponses(
  route: RestRoute,
  declared: ReadonlySet<ErrorCode>,
  examples: Partial<Record<ErrorCode, Record<string, unknown>>>,
) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route, declared)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => {
      const recorded = codes.flatMap((code) => {
        const value = examples[code];
        return value ? [[code, { summary: code, value }] as const] : [];
      });
      return [
        status,
        {
          description: codes.map((code) => `\`${code}\`: ${ERRORS[code].description}`).join('; '),
          headers: { ...COMMON_HEADERS, ...(status === 429 || status === 503 ? RETRY_AFTER : {}) },
          content: {
            'application/json': {
              schema: errorSchema(codes),
              ...(recorded.length ? { examples: Object.fromEntries(recorded) } : {}),
            },
          },
        },
      ];
    }),
  );
}

/** The headers of /v1 answers, declared once in the document's components. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: 'The request id, also `request` in the body',
    required: true,
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description:
      'Requests allowed per window to the caller (the account, or the client address without a valid token); absent only while Redis cannot be reached',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'When the window starts again, in seconds since the Unix epoch',
    schema: { type: 'integer' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
} as const;

const ref = (name: keyof typeof RESPONSE_HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** Every answer's headers. */
export const COMMON_HEADERS = {
  'X-Request-Id': ref('X-Request-Id'),
  'X-RateLimit-Limit': ref('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('X-RateLimit-Reset'),
};

const RETRY_AFTER = { 'Retry-After': ref('Retry-After') };

/** Response fields that travel as headers (`Idempotent-Replayed`), sent only when true. */
export function responseHeaders(headers: Record<string, string>) {
  return Object.fromEntries(
    Object.values(headers).map((header) => [
      header,
      { description: 'Sent, as `true`, only when it holds', schema: { type: 'string', enum: ['true'] } },
    ]),
  );
}

/** A query parameter is left out rather than sent as null. */
export function nonNull(schema: JsonSchema): JsonSchema {
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (anyOf) return anyOf.find((member) => member.type !== 'null') ?? schema;
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.find((t) => t !== 'null') };
  return schema;
}

export type JsonSchema = Record<string, unknown>;

/** GraphQL's scalars as JSON Schema, in requests and answers alike. */
export const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

/** A zod schema as the JSON Schema of what a client sends, with /v1 (snake_case) property names. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  return snakeProperties(json);
}

function snakeProperties(schema: JsonSchema): JsonSchema {
  const result: JsonSchema = { ...schema };
  if (schema.properties && typeof schema.properties === 'object') {
    result.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, inner]) => [
        snakeCase(key),
        snakeProperties(inner),
      ]),
    );
  }
  if (Array.isArray(schema.required)) result.required = (schema.required as string[]).map(snakeCase);
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else'] as const) {
    const inner = schema[key];
    if (Array.isArray(inner)) result[key] = inner.map((item) => snakeProperties(item as JsonSchema));
    else if (inner && typeof inner === 'object') result[key] = snakeProperties(inner as JsonSchema);
  }
  return result;
}
