import type { FastifyBaseLogger } from 'fastify';
import type { Credential } from '../modules/accounts/authentication.js';

/** What one request carries into every resolver: who is calling, and how to trace it. */
export interface Context {
  requestId: string;
  accountId: string | null;
  /** What the caller presented (a login token or an API key); null when anonymous. */
  credential: Credential | null;
  /** Why a presented token or key was refused, to tell the client; null when none was presented. */
  authFailure: string | null;
  clientAddress: string;
  logger: FastifyBaseLogger;
}
