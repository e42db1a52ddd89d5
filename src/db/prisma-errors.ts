import { Prisma } from '../generated/prisma/client.js';

/** Prisma's codes for the constraint failures the domain turns into answers of its own. */
const UNIQUE_VIOLATION = 'P2002';
const FOREIGN_KEY_VIOLATION = 'P2003';
const RECORD_NOT_FOUND = 'P2025';

function hasCode(error: unknown, code: string): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;
}

/** A write that a unique index refused: someone else stored the same thing first. */
export function isUniqueViolation(error: unknown): boolean {
  return hasCode(error, UNIQUE_VIOLATION);
}

/** A write naming a row that is gone (deleted between a check and the write). */
export function isForeignKeyViolation(error: unknown): boolean {
  return hasCode(error, FOREIGN_KEY_VIOLATION);
}

/** An update or delete of a row that its `where` did not find. */
export function isRecordNotFound(error: unknown): boolean {
  return hasCode(error, RECORD_NOT_FOUND);
}

// How a lost or refused PostgreSQL shows: socket errors from pg (directly or through Prisma's
// driver adapter), PostgreSQL's own "shutting down" / "cannot connect now" states, pg's pool
// giving up on a connection, and Prisma's codes for an unreachable server or an exhausted pool.
const UNREACHABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
const UNREACHABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024']);
const UNREACHABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Can't reach database server|Client has encountered a connection error/;

/** Whether an error (or one it wraps) means PostgreSQL cannot be reached right now. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code } = current as { code?: unknown };
    if (typeof code === 'string') {
      if (UNREACHABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
      if (UNREACHABLE_PRISMA_CODES.has(code)) return true;
    }
    if (UNREACHABLE_MESSAGES.test(current.message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
