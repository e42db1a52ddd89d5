import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { RequestContext } from '../graphql/context.js';
import type { TokenService } from '../modules/accounts/tokens.js';

interface Caller {
  accountId: string | null;
  /** Why a presented token was refused; null when none was presented. */
  authFailure: string | null;
}

const callers = new WeakMap<FastifyRequest, Caller>();

/** Who is calling, read once per request from its bearer token (the rate limit needs it first). */
export function authenticate(request: FastifyRequest, tokens: TokenService): Caller {
  let caller = callers.get(request);
  if (!caller) {
    try {
      caller = { accountId: tokens.accountFromHeader(request.headers.authorization), authFailure: null };
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      caller = { accountId: null, authFailure: error.message };
    }
    callers.set(request, caller);
  }
  return caller;
}

/** The caller `authenticate` found for the request, if it was asked. */
export function authenticatedCaller(request: FastifyRequest): Caller | undefined {
  return callers.get(request);
}

/** One context factory for GraphQL and /v1 alike: the same request id, caller and logger. */
export function createRequestContext(request: FastifyRequest, tokens: TokenService): RequestContext {
  return { requestId: request.id, ...authenticate(request, tokens), clientAddress: request.ip, logger: request.log };
}
