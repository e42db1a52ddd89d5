import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type ExecutionResult,
  type GraphQLEnumType,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
} from 'graphql';
import { type FileUpload, Upload } from 'graphql-upload-minimal';
import {
  AppError,
  describeIssues,
  type FieldIssue,
  type Issue,
  MAX_ISSUE_DETAILS,
  UnauthorizedError,
  ValidationError,
} from '../errors.js';
import type { Context } from '../graphql/context.js';
import { type MultipartForm, readMultipartForm } from '../lib/multipart.js';
import { unstorableTextPaths } from '../lib/validation.js';
import { sendAppError, sendError } from './error-response.js';
import { hintOf, withRestNames } from './field-hints.js';
import { refuseOtherMethods } from './method-not-allowed.js';
import type { Operation, OperationRegistry, VariableProblem } from './operations.js';
import type { RestRoute } from './route-table.js';

type ContextFactory = (request: FastifyRequest, reply: FastifyReply) => Promise<Context>;

/** Mounts every route of the table on Fastify, plus a 405 for the other methods of each path. */
export function registerRestRoutes(
  app: FastifyInstance,
  routes: readonly RestRoute[],
  registry: OperationRegistry,
  schema: GraphQLSchema,
  createContext: ContextFactory,
) {
  const errorTypes = errorTypeNames(schema);
  for (const route of routes) {
    const operation = registry.get(route.operation);
    const resultKey = rootResponseKey(operation);
    const { upload } = route;
    app.route({
      method: route.method,
      url: route.path,
      config: { multipart: upload !== undefined },
      handler: async (request, reply) => {
        const context = await createContext(request, reply);
        // The schema refuses an anonymous caller too, but only after the upload: nobody gets to spool a file first.
        if (upload && !route.public && !context.accountId)
          throw new UnauthorizedError(context.authFailure ?? undefined);
        const form = upload
          ? await readMultipartForm(request, { fileField: upload.field, maxFileBytes: upload.maxBytes })
          : null;
        try {
          const variables = variablesFor(route, operation, request, form);
          const found = [
            ...registry.checkVariables(operation, variables),
            ...unstorableTextPaths(variables).map((path) => ({ path, kind: 'invalid_value' as const })),
          ].map((problem) => {
            const detail = toFieldIssue(route, problem);
            return { detail, hint: hintOf(problem, detail.field, snakeCase) };
          });
          const unknownParameters = unknownQueryParameters(route, request);
          const problems = [
            ...(form?.problems ?? []),
            ...found.map(({ detail }) => detail),
            ...unknownParameters.map(({ detail }) => detail),
          ];
          const hints = new Map(
            [...found, ...unknownParameters].flatMap(({ detail, hint }) =>
              hint ? [[detail.field, hint]] : [],
            ),
          );
          if (problems.length > 0) throw new ValidationError(problems, describeIssues(problems, hints));
          const result = await registry.execute(operation, variables, context);
          return sendResult(reply, route, result, resultKey, errorTypes);
        } finally {
          await form?.discard();
        }
      },
    });
  }

  refuseOtherMethods(app, routes);
}

/**
 * Query parameters the route does not take, refused as unknown body fields are: a misspelt
 * `per_pgae` left unread would change the answer without saying so.
 */
function unknownQueryParameters(route: RestRoute, request: FastifyRequest) {
  const known = Object.keys(route.query ?? {});
  return Object.keys(request.query as Record<string, unknown>)
    .filter((name) => !known.includes(name))
    .slice(0, MAX_ISSUE_DETAILS + 1)
    .map((name) => ({
      detail: { field: name, issue: 'unknown_field' as const },
      hint: hintOf({ path: [name], kind: 'unknown_field', known }, name, (same) => same),
    }));
}

function variablesFor(
  route: RestRoute,
  operation: Operation,
  request: FastifyRequest,
  form: MultipartForm | null,
): Record<string, unknown> {
  const params = request.params as Record<string, string>;
  const headers = Object.entries(route.headers ?? {}).flatMap(([header, variable]) => {
    const value = request.headers[header.toLowerCase()];
    return value === undefined ? [] : [[variable, value] as const];
  });
  return {
    ...Object.fromEntries(
      Object.entries(route.params ?? {}).map(([param, variable]) => [variable, params[param]]),
    ),
    ...queryVariables(route, operation, request.query as Record<string, string | string[] | undefined>),
    ...Object.fromEntries(headers),
    ...(route.body
      ? { [route.body]: bodyVariable(operation.variableTypes.get(route.body), request, form) }
      : {}),
    ...(route.upload && form?.file
      ? { [route.upload.variable]: uploadOf(route.upload.field, form.file) }
      : {}),
  };
}

function queryVariables(
  route: RestRoute,
  operation: Operation,
  query: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(route.query ?? {})) {
    const value = query[name];
    if (value === undefined) continue;
    // A repeated parameter is ambiguous; passing the array on makes it an invalid value.
    variables[variable] = Array.isArray(value)
      ? value
      : fromText(value, operation.variableTypes.get(variable));
  }
  return variables;
}

/** The body's input object: the form's fields, or the JSON object with camelCase keys. */
function bodyVariable(
  type: GraphQLInputType | undefined,
  request: FastifyRequest,
  form: MultipartForm | null,
) {
  if (form) return formFields(form, type);
  const body: unknown = request.body === undefined ? {} : request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('bad_request', 'The body must be a JSON object');
  }
  return camelizeKeys(body as Record<string, unknown>);
}

/** A form's text fields as the input object they stand for: camelCase keys, values read as its field types. */
function formFields(form: MultipartForm, type: GraphQLInputType | undefined): Record<string, unknown> {
  const named = type ? getNamedType(type) : undefined;
  const fieldTypes = named && isInputObjectType(named) ? named.getFields() : {};
  return Object.fromEntries(
    [...form.fields].map(([name, values]) => {
      const key = camelCase(name);
      // A repeated field is ambiguous; passing the array on makes it an invalid value.
      return [key, values.length === 1 ? fromText(values[0]!, fieldTypes[key]?.type) : values];
    }),
  );
}

/** The spooled file as graphql-upload-minimal's Upload, the value /graphql gives the same variable. */
function uploadOf(fieldName: string, file: NonNullable<MultipartForm['file']>): Upload {
  const upload = new Upload() as Upload & { resolve(file: FileUpload): void };
  upload.resolve({
    fieldName,
    filename: file.filename,
    mimetype: file.mimetype,
    encoding: '7bit',
    createReadStream: () => createReadStream(file.path),
  });
  return upload;
}

/** Query strings and form fields carry text; numbers and booleans are read as such where the type wants them. */
function fromText(value: string, type: GraphQLInputType | undefined): unknown {
  const nullable = type ? getNullableType(type) : undefined;
  // A list in a query parameter is written comma-separated: group_by=country,carrier.
  if (nullable && isListType(nullable))
    return value === '' ? [] : value.split(',').map((item) => fromText(item, nullable.ofType));
  const namedType = type ? getNamedType(type) : undefined;
  if (namedType && isEnumType(namedType)) return enumValueOf(namedType, value);
  return scalarFromText(value, namedType?.name ?? 'String');
}

function scalarFromText(value: string, named: string): unknown {
  if (
    (named === 'Int' && /^-?\d{1,15}$/.test(value)) ||
    (named === 'Float' && value.trim() !== '' && Number.isFinite(Number(value)))
  ) {
    return Number(value);
  }
  if (named === 'Boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** /v1 writes values in lower case (`hour`, `status`): an enum's value is taken in any case. */
function enumValueOf(type: GraphQLEnumType, value: string): string {
  const lower = value.toLowerCase();
  return type.getValues().find((known) => known.name.toLowerCase() === lower)?.name ?? value;
}

function toFieldIssue(route: RestRoute, problem: VariableProblem): FieldIssue {
  const [variable, ...rest] = problem.path;
  const issue: Issue = problem.kind;
  if (variable === route.body) return { field: rest.map(snakeCase).join('.') || 'body', issue };
  const restName =
    Object.entries({
      ...route.query,
      ...route.params,
      ...route.headers,
      ...(route.upload ? { [route.upload.field]: route.upload.variable } : {}),
    }).find(([, v]) => v === variable)?.[0] ?? variable;
  return { field: [restName, ...rest.map(snakeCase)].join('.'), issue };
}

function sendResult(
  reply: FastifyReply,
  route: RestRoute,
  result: ExecutionResult,
  resultKey: string,
  errorTypes: Set<string>,
) {
  const [firstError] = result.errors ?? [];
  if (firstError) return sendRequestError(reply, firstError);
  const value = (result.data as Record<string, unknown> | null | undefined)?.[resultKey] as Record<
    string,
    unknown
  > | null;
  if (value === null || value === undefined)
    throw new Error(`operation ${route.operation} returned no ${resultKey}`);
  const { __typename: typename, ...fields } = value;
  if (typeof typename === 'string' && errorTypes.has(typename)) return sendErrorMember(reply, fields);
  for (const [name, header] of Object.entries(route.responseHeaders ?? {})) {
    if (fields[name] === true) reply.header(header, 'true');
    delete fields[name];
  }
  for (const name of route.omitNull ?? []) {
    if (fields[name] === null) delete fields[name];
  }
  return reply.status(route.status).send({ ...fields, request: reply.request.id });
}

/** An error member of the field's result union (the `ErrorFields` fragment), in the /v1 error body. */
function sendErrorMember(reply: FastifyReply, fields: Record<string, unknown>) {
  const { message, details } = withRestNames(
    String(fields.error_message),
    (fields.error_details as FieldIssue[] | null | undefined) ?? undefined,
    snakeCase,
  );
  // A refusal that says when to try again (a quota) says it in the header, as a 429 does.
  if (typeof fields.error_retry_after === 'number')
    reply.header('retry-after', String(fields.error_retry_after));
  return sendError(reply, String(fields.error_code), message, details);
}

/** A failure of the request as a whole (an AppError thrown by a resolver or a plugin), in the /v1 error body. */
function sendRequestError(reply: FastifyReply, error: GraphQLError) {
  const original = error.originalError;
  if (original instanceof ValidationError) {
    const { message, details } = withRestNames(original.message, original.details, snakeCase);
    return sendError(reply, original.code, message, details);
  }
  if (original instanceof AppError) return sendAppError(reply, original);
  throw original ?? error;
}

function rootResponseKey(operation: Operation): string {
  const [selection] = operation.definition.selectionSet.selections;
  if (operation.definition.selectionSet.selections.length !== 1 || selection?.kind !== 'Field') {
    throw new Error(`operation ${operation.name} must select exactly one root field`);
  }
  return selection.alias?.value ?? selection.name.value;
}

function errorTypeNames(schema: GraphQLSchema): Set<string> {
  const errorInterface = schema.getType('Error');
  if (!errorInterface || !isInterfaceType(errorInterface)) return new Set();
  return new Set(schema.getImplementations(errorInterface).objects.map((type) => type.name));
}

function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

// Input objects nest a few levels at most. Deeper than this a value is wrong whatever its keys
// (GraphQL's coercion says so), and walking it further could exhaust the call stack.
const MAX_CAMELIZED_DEPTH = 8;

function camelizeKeys(value: Record<string, unknown>, depth = 0): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      camelCase(key),
      depth < MAX_CAMELIZED_DEPTH && inner !== null && typeof inner === 'object' && !Array.isArray(inner)
        ? camelizeKeys(inner as Record<string, unknown>, depth + 1)
        : inner,
    ]),
  );
}

export function snakeCase(name: string): string {
  return name.replace(
    /([a-z0-9])([A-Z])/g,
    (_, before: string, capital: string) => `${before}_${capital.toLowerCase()}`,
  );
}
