import type { FastifyBaseLogger } from 'fastify';

/** What one request carries into every resolver: who is calling, and how to trace it. */
export interface Context {
  requestId: string;
  accountId: string | null;
  /** Why a presented token was refused, to tell the client; null when none was presented. */
  authFailure: string | null;
  clientAddress: string;
  logger: FastifyBaseLogger;
}
