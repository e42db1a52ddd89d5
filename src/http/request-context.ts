import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { RequestContext } from '../graphql/context.js';
import type { Authenticator, Credential, PresentedCredential } from '../modules/accounts/authentication.js';

interface RequestCaller {
  accountId: string | null;
  credential: Credential | null;
  /** Why a presented token or key was refused; null when none was presented. */
  authFailure: string | null;
}

const presentedCredentials = new WeakMap<FastifyRequest, PresentedCredential | UnauthorizedError | null>();
const callers = new WeakMap<FastifyRequest, Promise<RequestCaller>>();
const settledCallers = new WeakMap<FastifyRequest, RequestCaller>();

/** The request's credential as read without PostgreSQL, once per request (a login token's signature is checked once). */
function presentedCredential(
  request: FastifyRequest,
  authenticator: Authenticator,
): PresentedCredential | UnauthorizedError | null {
  if (!presentedCredentials.has(request)) {
    let presented: PresentedCredential | UnauthorizedError | null;
    try {
      presented = authenticator.read(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      presented = error;
    }
    presentedCredentials.set(request, presented);
  }
  return presentedCredentials.get(request) ?? null;
}

/**
 * The account the request's credential belongs to when that is known before any lookup (see
 * Authenticator.knownAccount); null when it is not, or there is no credential, or it is refused.
 */
export function knownAccount(request: FastifyRequest, authenticator: Authenticator): string | null {
  const presented = presentedCredential(request, authenticator);
  return presented === null || presented instanceof UnauthorizedError
    ? null
    : authenticator.knownAccount(presented);
}

/** Who is calling, looked up once per request from its bearer credential (the rate limit may need it first). */
export function authenticate(request: FastifyRequest, authenticator: Authenticator): Promise<RequestCaller> {
  let caller = callers.get(request);
  if (!caller) {
    const presented = presentedCredential(request, authenticator);
    const lookup =
      presented === null
        ? Promise.resolve(null)
        : presented instanceof UnauthorizedError
          ? Promise.reject(presented)
          : authenticator.confirm(presented);
    caller = lookup.then(
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
