import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/prisma-errors.js';
import {
  AppError,
  DatabaseUnavailableError,
  type FieldIssue,
  FraudBlockedError,
  httpStatusFor,
  retryAfterOf,
  ValidationError,
} from '../errors.js';

export interface ErrorBody {
  error: { code: string; message: string; details?: FieldIssue[] };
  request: string;
}

export function sendError(
  reply: FastifyReply,
  code: string,
  message: string,
  details?: FieldIssue[],
): FastifyReply {
  reply.status(httpStatusFor(code)).type('application/json; charset=utf-8');
  // A refusal before GraphQL ran (rate limit, body limits) still answers in GraphQL's shape there.
  // The matched route, not the raw URL: the router decodes `/%67raphql` to `/graphql`.
  if ((reply.request.routeOptions.url ?? reply.request.url).startsWith('/graphql')) {
    return reply.send({
      errors: [{ message, extensions: { code, ...(details ? { details } : {}), request: reply.request.id } }],
      extensions: { request: reply.request.id },
    });
  }
  const body: ErrorBody = {
    error: { code, message, ...(details ? { details } : {}) },
    request: reply.request.id,
  };
  return reply.send(body);
}

export function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  return sendError(
    reply,
    error.code,
    error.message,
    error instanceof ValidationError || error instanceof FraudBlockedError ? error.details : undefined,
  );
}

/** Fastify's own errors (body parsing, limits) and anything unexpected, in Tern's error body. */
export function handleHttpError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) return sendAppError(reply, error);
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return sendError(reply, 'payload_too_large', 'The request body is larger than 1 MB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return sendError(
        reply,
        'bad_request',
        'The body must be JSON, sent with Content-Type: application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return sendError(reply, 'bad_request', 'The body is empty but Content-Type says JSON');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return sendError(reply, 'bad_request', 'The body is not valid JSON');
  }
  if (
    fastifyError.statusCode !== undefined &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    const message = error instanceof SyntaxError ? 'The body is not valid JSON' : 'The request is malformed';
    return sendError(reply, 'bad_request', message);
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'refused: the database is unavailable');
    return sendAppError(reply, new DatabaseUnavailableError());
  }
  request.log.error({ err: error }, 'unexpected error');
  return sendError(
    reply,
    'internal_error',
    'An unexpected error occurred; quote the request id when reporting it',
  );
}

/**
 * A request Node's HTTP parser refused before Fastify saw it (headers or URL over 16 KB, not
 * HTTP at all, too slow to arrive): answered in Tern's error body, not Node's own.
 */
export function answerUnreadableRequest(
  error: Error & { code?: string },
  socket: Socket,
  requestId: string,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request line and headers are larger than 16 KB'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request did not arrive in time'
        : 'The request is not valid HTTP';
  const body = JSON.stringify({ error: { code: 'bad_request', message }, request: requestId });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
