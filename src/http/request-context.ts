import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { Context } from '../graphql/context.js';
import type { TokenService } from '../modules/accounts/tokens.js';

/** One context factory for GraphQL and /v1 alike: the same request id, caller and logger. */
export function createRequestContext(request: FastifyRequest, tokens: TokenService): Context {
  let accountId: string | null = null;
  let authFailure: string | null = null;
  try {
    accountId = tokens.accountFromHeader(request.headers.authorization);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    authFailure = error.message;
  }
  return { requestId: request.id, accountId, authFailure, clientAddress: request.ip, logger: request.log };
}
