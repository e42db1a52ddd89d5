import type { FastifyBaseLogger } from 'fastify';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Credential } from '../modules/accounts/authentication.js';
import type { Services } from '../services.js';
import type { FieldRateLimits } from './field-rate-limits.js';

/** Who is calling, and how to trace the request: what the HTTP layer reads from each request. */
export interface RequestContext {
  requestId: string;
  accountId: string | null;
  /** What the caller presented (a login token or an API key); null when anonymous. */
  credential: Credential | null;
  /** Why a presented token or key was refused, to tell the client; null when none was presented. */
  authFailure: string | null;
  clientAddress: string;
  logger: FastifyBaseLogger;
  /**
   * Whether the request's credential still names the same account: a subscription outlives the
   * moment it was authenticated, and a revoked key or a disabled account must end its streams.
   */
  stillAuthenticated(): Promise<boolean>;
}

/**
 * What one request carries into every resolver: the caller, and the process's domain layer.
 * The schema itself holds no connection, so it can be built (and printed) without any.
 */
export interface Context extends RequestContext {
  services: Services;
  fieldRateLimits: FieldRateLimits;
  /** For Pothos' Prisma plugin, which loads the relations a query selects; resolvers go through `services`. */
  prisma: PrismaClient;
  /**
   * Aborts when the client's connection for this request closes: a subscription's stream ends with
   * it, even when the client leaves before the stream's first byte (and so before any read of it).
   */
  connectionClosed: AbortSignal;
}

/** A request the `account` scope let through: its caller is an account, with a credential. */
export interface AccountContext extends Context {
  accountId: string;
  credential: Credential;
}
