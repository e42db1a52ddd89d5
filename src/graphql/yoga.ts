import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  NoSchemaIntrospectionCustomRule,
} from 'graphql';
import { createYoga, type GraphQLParams, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/prisma-errors.js';
import {
  AppError,
  DatabaseUnavailableError,
  httpStatusFor,
  isRequestLevel,
  retryAfterOf,
  ValidationError,
} from '../errors.js';
import { isMultipart, readGraphQLMultipart } from '../lib/multipart.js';
import { unstorableTextPaths } from '../lib/validation.js';
import { CONSOLE_OPTIONS } from './console.js';
import type { Context } from './context.js';
import { csrfPrevention } from './csrf.js';
import { unstorableLiteralPaths } from './document-literals.js';
import { checkVariablesInTheDomain } from './domain-checked-schema.js';
import { assertListsBounded, limitQueryCost, MAX_DOCUMENT_TOKENS } from './query-cost.js';

export const MAX_BATCHED_OPERATIONS = 10;

export interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

export interface GraphQLServerOptions {
  schema: GraphQLSchema;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
  /** Error entries carry only their message, code and the request id. */
  production: boolean;
  /** The largest `operations` or `map` field of a multipart request. */
  maxMultipartFieldBytes: number;
  createContext: (request: FastifyRequest, reply: FastifyReply) => Promise<Context>;
  /** Sees each operation run, for the metrics. */
  observeOperations?: Plugin<ServerContext>;
}

/**
 * Expected failures keep their error code (src/errors.ts) in `extensions.code` (and, for the
 * request-level ones, the HTTP status); anything else becomes `internal_error`.
 */
export function toPublicGraphQLError(error: unknown): Error {
  const thrown = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const original = isDatabaseUnavailable(thrown) ? new DatabaseUnavailableError() : thrown;
  const graphQLError = error instanceof GraphQLError ? error : undefined;
  if (original instanceof AppError) {
    // A malformed request, or an upload over its limit, is the request's fault as a whole, as in /v1: 400, 413.
    const requestLevel = isRequestLevel(original.code);
    const retryAfter = retryAfterOf(original);
    return new GraphQLError(original.message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions: {
        code: original.code,
        ...(original instanceof ValidationError ? { details: original.details } : {}),
        ...(requestLevel
          ? {
              http: {
                status: httpStatusFor(original.code),
                ...(retryAfter === undefined ? {} : { headers: { 'retry-after': String(retryAfter) } }),
              },
            }
          : {}),
      },
    });
  }
  // Errors of the GraphQL protocol itself (syntax, validation, variables) are meant for the client.
  if (graphQLError && original instanceof GraphQLError) return graphQLError;
  return new GraphQLError('An unexpected error occurred; quote the request id when reporting it', {
    nodes: graphQLError?.nodes,
    path: graphQLError?.path,
    extensions: { code: 'internal_error' },
  });
}

function isUnexpected(error: GraphQLError): boolean {
  return (
    error.originalError !== undefined &&
    !(error.originalError instanceof AppError) &&
    !(error.originalError instanceof GraphQLError)
  );
}

/** An expected failure (an AppError, with its code) or a mistake in the request (syntax, validation). */
function isClientError(logged: unknown): boolean {
  if (logged instanceof AppError) return true;
  return logged instanceof GraphQLError && !isUnexpected(logged);
}

/** Logs every unexpected resolver error with its request id, before masking hides it from the client. */
const logUnexpectedErrors: Plugin<Context> = {
  onExecute: () => ({
    onExecuteDone: ({ args, result }) => {
      const results = (Array.isArray(result) ? result : [result]) as ExecutionResult[];
      for (const single of results) {
        for (const error of single.errors ?? []) {
          if (isUnexpected(error)) {
            const context = args.contextValue as Context;
            context.logger.error({ err: error.originalError, path: error.path }, 'unexpected GraphQL error');
          }
        }
      }
    },
  }),
};

/**
 * graphql-js ends many messages with a guess at what was meant (`Did you mean "timezone"?`,
 * `Did you mean the enum value "sent"?`), naming fields, types and values of the schema, which
 * introspection being off is meant to keep to itself. The guess is always the message's last
 * sentence. graphql 16 has no switch for it, and graphql-armor's plugin for it only sees
 * validation errors (not variable coercion) and misses the enum-value wording.
 */
const SUGGESTION = /\s*Did you mean [^?]*\?$/;

/**
 * An error entry as production shows it: what the client can act on, nothing about the server
 * or the schema. Still a GraphQLError, whose `extensions.http` Yoga reads for the status and then
 * leaves out.
 */
function productionError(error: GraphQLError, requestId: string): GraphQLError {
  const { code, details, http } = error.extensions ?? {};
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    extensions: {
      code: typeof code === 'string' ? code : 'bad_request',
      ...(details ? { details } : {}),
      request: requestId,
      ...(http ? { http } : {}),
    },
  });
}

/**
 * Every GraphQL answer carries the request id in `extensions.request`, as /v1 bodies carry
 * `request`. In production each error entry is cut down to its message, `extensions.code` (with
 * `details` for a validation error) and the request id: no locations, paths or anything else of
 * the server's.
 */
function resultExtensions(production: boolean): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      if (Symbol.asyncIterator in result) return;
      const requestId = serverContext.req.id;
      const stamp = (single: ExecutionResult): ExecutionResult => ({
        ...single,
        ...(production && single.errors
          ? { errors: single.errors.map((error) => productionError(error, requestId)) }
          : {}),
        extensions: { ...single.extensions, request: requestId },
      });
      setResult(Array.isArray(result) ? result.map(stamp) : stamp(result as ExecutionResult));
    },
  };
}

/**
 * GraphQL multipart requests (file uploads) are parsed by graphql-upload-minimal, which hands
 * each file to its resolver as a stream; Yoga's own parser (turned off) holds files in memory.
 * Parsed here, inside Yoga, the request is seen as sent by every other plugin (the CSRF check).
 */
function streamedUploads(maxFieldBytes: number): Plugin<Record<string, unknown>, ServerContext> {
  return {
    onRequestParse({ serverContext, setRequestParser }) {
      if (!isMultipart(serverContext.req)) return;
      setRequestParser(
        () =>
          readGraphQLMultipart(serverContext.req, serverContext.reply, maxFieldBytes) as Promise<
            GraphQLParams | GraphQLParams[]
          >,
      );
    },
  };
}

/**
 * Text that cannot be stored (NUL, a lone surrogate), in the variables or written into the
 * document, is refused before any resolver sees it, as /v1 refuses it: a resolver would hand it
 * to PostgreSQL, which fails on a NUL.
 */
const refuseUnstorableText: Plugin = {
  onExecute: ({ args, setResultAndStopExecution }) => {
    const paths = [
      ...unstorableLiteralPaths(args.document),
      ...unstorableTextPaths(args.variableValues ?? {}),
    ];
    if (paths.length === 0) return;
    const details = paths.map((path) => ({ field: path.join('.'), issue: 'invalid_value' as const }));
    setResultAndStopExecution({
      errors: [
        toPublicGraphQLError(
          new ValidationError(details, 'Text may not contain NUL characters or unpaired surrogates'),
        ),
      ],
    });
  },
};

const disableIntrospection: Plugin = {
  onValidate: ({ addValidationRule }) => {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

export function createGraphQLServer(options: GraphQLServerOptions) {
  assertListsBounded(options.schema);
  return createYoga<ServerContext, Context>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    multipart: false,
    graphiql: options.graphiql ? CONSOLE_OPTIONS : false,
    // GraphiQL from the installed package, its scripts and styles inlined in the page: the
    // console works without internet (Yoga's default page loads them from a CDN). The package
    // holds its bundle as a string, some 30 MB of heap once loaded, so it is loaded at the first
    // visit of the console, never in a process whose console nobody opens.
    renderGraphiQL: async (graphiQLOptions) =>
      (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(graphiQLOptions),
    context: ({ req, reply }) => options.createContext(req, reply),
    maskedErrors: { maskError: (error) => toPublicGraphQLError(error) },
    logging: {
      debug: (...args) => options.logger.debug(args.map(String).join(' ')),
      info: (...args) => options.logger.info(args.map(String).join(' ')),
      warn: (...args) => options.logger.warn(args.map(String).join(' ')),
      // Yoga logs every error it masks, the client's own mistakes included: those are not the server's errors.
      error: (...args) =>
        options.logger[args.every(isClientError) ? 'debug' : 'error'](args.map(String).join(' ')),
    },
    // Several operations in one request are allowed, up to a few, each checked like one.
    batching: { limit: MAX_BATCHED_OPERATIONS },
    plugins: [
      // Limits on what one document may ask for: the /v1 operations stay well within them.
      maxDepthPlugin({ n: 10, exposeLimits: true }),
      maxAliasesPlugin({ n: 30, exposeLimits: true }),
      maxDirectivesPlugin({ n: 20, exposeLimits: true }),
      maxTokensPlugin({ n: MAX_DOCUMENT_TOKENS, exposeLimits: true }),
      // How many objects the request could return, all its operations together, before any runs.
      limitQueryCost(options.schema),
      csrfPrevention() as Plugin<ServerContext & Context>,
      streamedUploads(options.maxMultipartFieldBytes) as Plugin<ServerContext & Context>,
      refuseUnstorableText as Plugin<ServerContext & Context>,
      checkVariablesInTheDomain(options.schema) as Plugin<ServerContext & Context>,
      logUnexpectedErrors as Plugin<ServerContext & Context>,
      resultExtensions(options.production) as Plugin<ServerContext & Context>,
      ...(options.introspection ? [] : [disableIntrospection as Plugin<ServerContext & Context>]),
      ...(options.observeOperations ? [options.observeOperations as Plugin<ServerContext & Context>] : []),
    ],
  });
}

export type GraphQLServer = ReturnType<typeof createGraphQLServer>;
