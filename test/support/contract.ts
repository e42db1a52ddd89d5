import { Ajv2020 } from 'ajv/dist/2020.js';
import { ternOpenApi } from '../../src/rest/openapi-document.js';

type Schema = Record<string, unknown>;
interface DocumentedHeader {
  required?: boolean;
  schema: Schema;
}

interface DocumentedOperation {
  pattern: RegExp;
  method: string;
  requestSchema?: Schema;
  responses: Record<
    string,
    {
      content?: Record<string, { schema: Schema }>;
      headers?: Record<string, DocumentedHeader | { $ref: string }>;
    }
  >;
  /** The document's shared headers, which responses name by $ref. */
  headers: Record<string, DocumentedHeader>;
}

const documents = new Map<boolean, DocumentedOperation[]>();
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

/** The operations of the document a Tern serves; it depends on whether plain-http webhooks are allowed. */
function documented(allowInsecureWebhooks: boolean): DocumentedOperation[] {
  const known = documents.get(allowInsecureWebhooks);
  if (known) return known;
  const document = ternOpenApi(allowInsecureWebhooks);
  const headers = document.components.headers as Record<string, DocumentedHeader>;
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, any>).map(([method, operation]) => ({
      pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`),
      method: method.toUpperCase(),
      requestSchema: operation.requestBody?.content?.['application/json']?.schema,
      responses: operation.responses,
      headers,
    })),
  );
  documents.set(allowInsecureWebhooks, operations);
  return operations;
}

function mismatch(schema: Schema, value: unknown): string | undefined {
  const validate = ajv.compile(schema);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** The headers the document declares for a response that the answer lacks or sends in another form. */
function headerMismatch(
  operation: DocumentedOperation,
  declared: Record<string, DocumentedHeader | { $ref: string }>,
  received: Headers,
): string | undefined {
  for (const [name, entry] of Object.entries(declared)) {
    const header =
      '$ref' in entry ? operation.headers[entry.$ref.slice('#/components/headers/'.length)] : entry;
    if (!header) return `${name}: its $ref names no header of the document`;
    const value = received.get(name);
    if (value === null) {
      if (header.required) return `the required header ${name} is missing`;
      continue;
    }
    const problem = mismatch(header.schema, header.schema.type === 'integer' ? Number(value) : value);
    if (problem) return `header ${name}: ${value}: ${problem}`;
  }
}

/**
 * Checks one /v1 exchange of a test against the OpenAPI document: the status is one the
 * document lists for the operation, the body fits that status's schema, the headers it declares
 * are there and of their form, and a 2xx answered a request the document calls valid. Returns
 * what does not match, or nothing.
 */
export function contractMismatch(
  allowInsecureWebhooks: boolean,
  method: string,
  url: string,
  requestBody: unknown,
  status: number,
  responseBody: unknown,
  responseHeaders: Headers,
): string | undefined {
  const path = new URL(url, 'http://tern').pathname;
  if (!path.startsWith('/v1/') || path === '/v1/openapi.json') return;
  const operation = documented(allowInsecureWebhooks).find(
    (op) => op.method === method && op.pattern.test(path),
  );
  // 404 for unknown paths and 405 for other methods are the router's, not an operation's.
  if (!operation) return;
  if (status === 405 || status === 404) return;
  const label = `${method} ${path} → ${status}`;
  const response = operation.responses[String(status)];
  if (!response)
    return `${label}: status not in the document (${Object.keys(operation.responses).join(', ')})`;
  const schema = response.content?.['application/json']?.schema;
  const problem = schema ? mismatch(schema, responseBody) : undefined;
  if (problem) return `${label}: response does not match the document: ${problem}`;
  const headerProblem = headerMismatch(operation, response.headers ?? {}, responseHeaders);
  if (headerProblem) return `${label}: ${headerProblem}`;
  if (status < 300 && operation.requestSchema && requestBody !== undefined) {
    const requestProblem = mismatch(operation.requestSchema, requestBody);
    if (requestProblem) return `${label}: accepted a body the document refuses: ${requestProblem}`;
  }
}
