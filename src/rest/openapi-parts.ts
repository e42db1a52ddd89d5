import { type GraphQLSchema, getNamedType, isUnionType, Kind } from 'graphql';
import { type ErrorCode, HTTP_STATUS_BY_CODE, MAX_ISSUE_DETAILS } from '../errors.js';
import type { Operation } from './operations.js';
import type { JsonSchema } from './request-schemas.js';
import type { RestRoute } from './route-table.js';

/** The result-union members of Tern's schema that are expected failures, by their error code. */
const CODE_BY_ERROR_TYPE: Readonly<Record<string, ErrorCode>> = {
  ValidationError: 'validation_error',
  NotFoundError: 'not_found',
  ConflictError: 'conflict',
  InvalidStateError: 'invalid_state',
  InvalidCredentialsError: 'invalid_credentials',
  OtpRequiredError: 'otp_required',
};

/** The expected failures the operation's field declares: the error members of its result union. */
export function declaredErrorCodes(operation: Operation, schema: GraphQLSchema): Set<ErrorCode> {
  const root =
    operation.definition.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const selection = operation.definition.selectionSet.selections[0];
  const field = selection?.kind === Kind.FIELD ? root?.getFields()[selection.name.value] : undefined;
  const result = field ? getNamedType(field.type) : undefined;
  const members = result && isUnionType(result) ? result.getTypes() : [];
  return new Set(members.flatMap((member) => CODE_BY_ERROR_TYPE[member.name] ?? []));
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
  for (const code of [
    'invalid_credentials',
    'otp_required',
    'not_found',
    'conflict',
    'invalid_state',
  ] as const) {
    // An id in the path that names nothing of the account's is a 404 whatever the field declares.
    if (declared.has(code) || (code === 'not_found' && route.params)) codes.push(code);
  }
  // Any route: a query parameter it does not take is refused by name.
  codes.push('validation_error');
  // Any route: a failure of the service's own (answered without details), or a shutdown under way.
  codes.push('rate_limited', 'internal_error', 'service_unavailable');
  return codes;
}

const SAMPLE_STRINGS: Record<string, string> = {
  email: 'ana@example.com',
  to: '+5511987654321',
  phone: '+5511987654321',
  password: 'correct horse battery',
  message: 'Your code is 4821',
  content: 'Hello {{name}}',
  url: 'https://example.com/tern-webhook',
  webhook: 'https://example.com/tern-webhook',
  timezone: 'America/Sao_Paulo',
  default_sender: 'Tern',
  code: '123456',
};

/** A value that fits the schema, for the document's examples: the schema's own example first. */
export function exampleOf(schema: JsonSchema, name = ''): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (anyOf) return exampleOf(anyOf.find((member) => member.type !== 'null') ?? anyOf[0]!, name);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      // With a choice of fields (oneOf), the example takes the first.
      const [, ...others] = (schema.oneOf ?? []) as JsonSchema[];
      const leftOut = new Set(others.flatMap((branch) => (branch.required as string[]) ?? []));
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([key]) => !leftOut.has(key))
          .map(([key, inner]) => [key, exampleOf(inner, key)]),
      );
    }
    case 'array':
      return schema.items ? [exampleOf(schema.items as JsonSchema, name)] : [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-01T12:00:00Z';
      if (schema.format === 'binary') return 'contacts.csv';
      return SAMPLE_STRINGS[name] ?? (name ? `${name.replaceAll('_', '-')}-1` : 'text');
    default:
      return null;
  }
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
              properties: { field: { type: 'string' }, issue: { type: 'string' } },
            },
          },
        },
      },
      request: { type: 'string' },
    },
  };
}

/** Each error status the route can answer with, and the codes behind it. */
export function errorResponses(route: RestRoute, declared: ReadonlySet<ErrorCode>) {
  const byStatus = new Map<number, string[]>();
  for (const code of errorCodesOf(route, declared)) {
    const status = HTTP_STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      status,
      {
        description: `Error: ${codes.join(' or ')}`,
        content: {
          'application/json': {
            schema: errorSchema(codes),
            example: { error: { code: codes[0], message: 'See error.message' }, request: 'req_1' },
          },
        },
      },
    ]),
  );
}

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
