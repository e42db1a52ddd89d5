import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { RequestContext } from '../graphql/context.js';
import type { Authenticator, Credential } from '../modules/accounts/authentication.js';

interface RequestCaller {
  accountId: string | null;
  credential: Credential | null;
  /** Why a presented token or key was refused; null when none was presented. */
  authFailure: string | null;
}

const callers = new WeakMap<FastifyRequest, Promise<RequestCaller>>();
const settledCallers = new WeakMap<FastifyRequest, RequestCaller>();

/** Who is calling, read once per request from its bearer credential (the rate limit needs it first). */
export function authenticate(request: FastifyRequest, authenticator: Authenticator): Promise<RequestCaller> {
  let caller = callers.get(request);
  if (!caller) {
    caller = authenticator.fromHeader(request.headers.authorization).then(
      (found): RequestCaller => ({
        accountId: found?.accountId ?? null,
        credential: found?.credential ?? null,
        authFailure: null,
      }),
      (error: unknown): RequestCaller => {
        if (!(error instanceof UnauthorizedError)) throw error;
        return { accountId: null, credential: null, authFailure: error.message };
      },
    );
    caller.then(
      (settled) => settledCallers.set(request, settled),
      () => undefined,
    );
    callers.set(request, caller);
  }
  return caller;
}

/** The caller `authenticate` found for the request, once it was asked and answered (for the request log). */
export function authenticatedCaller(request: FastifyRequest): RequestCaller | undefined {
  return settledCallers.get(request);
}

/** One context factory for GraphQL and /v1 alike: the same request id, caller and logger. */
export async function createRequestContext(
  request: FastifyRequest,
  authenticator: Authenticator,
): Promise<RequestContext> {
  const caller = await authenticate(request, authenticator);
  return {
    requestId: request.id,
    ...caller,
    clientAddress: request.ip,
    logger: request.log,
    stillAuthenticated: () =>
      authenticator.fromHeader(request.headers.authorization).then(
        (found) => found !== null && found.accountId === caller.accountId,
        (error: unknown) => {
          if (error instanceof UnauthorizedError) return false;
          throw error;
        },
      ),
  };
}
