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
