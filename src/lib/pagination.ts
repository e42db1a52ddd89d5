import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { parseInput } from './validation.js';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;
/** Longer than any cursor Tern hands out. */
const MAX_CURSOR_LENGTH = 200;

export const pageInput = z.object({
  page: z.number().int().min(1).max(1_000_000).default(1).meta({ description: 'The page to read, from 1' }),
  perPage: z
    .number()
    .int()
    .min(1)
    .max(MAX_PER_PAGE)
    .default(DEFAULT_PER_PAGE)
    .meta({ description: 'Items per page' }),
});

export const cursorInput = z.object({
  first: z
    .number()
    .int()
    .min(1)
    .max(MAX_PER_PAGE)
    .meta({
      description: `Rows of a page read by cursor, instead of \`page\`; ${DEFAULT_PER_PAGE} when left out`,
    })
    .optional(),
  after: z
    .string()
    .min(1)
    .max(MAX_CURSOR_LENGTH)
    .meta({
      description: 'The `pageInfo.endCursor` of the page before; omitted, the first page of a cursor walk',
    })
    .optional(),
});

/**
 * A position in a list ordered by (created_at, key): the row a page starts after. The key is the
 * row's id, or for a list of rows without one (opt-outs) the column that tells rows apart.
 */
export interface Cursor {
  createdAt: Date;
  id: string;
}

/** The column that breaks ties of created_at in a list's order. */
export type CursorKey = 'id' | 'phone';

export interface PageRequest {
  page: number;
  perPage: number;
  /**
   * Set when the list is paged by cursor (`first`/`after`): rows after this one, read through
   * the (created_at, id) index however deep in the list, where `page` makes PostgreSQL read and
   * skip every row before it. `{ after: null }` is the first page of a cursor walk.
   */
  cursor?: { after: Cursor | null };
  /** Rows read beyond the page, to learn whether another follows; the page itself stays where it is. */
  lookahead?: number;
}

export interface PageArgs {
  page?: number | null;
  perPage?: number | null;
  first?: number | null;
  after?: string | null;
}

/**
 * `page` from 1, `per_page` 1..100 (default 20); or `first` 1..100 rows `after` a cursor, where
 * `page` has no place. Anything else is a 422 of its own.
 */
export function parsePage(input: PageArgs): PageRequest {
  const numbered = parseInput(pageInput, {
    page: input.page ?? undefined,
    perPage: input.perPage ?? undefined,
  });
  const first = input.first ?? undefined;
  const after = input.after ?? undefined;
  if (first === undefined && after === undefined) return numbered;
  if (input.page !== undefined && input.page !== null)
    throw new ValidationError(
      [{ field: 'page', issue: 'invalid_value' }],
      'page cannot be combined with first/after: page by number or by cursor',
    );
  const cursor = parseInput(cursorInput, { first, after });
  return {
    page: 1,
    perPage: cursor.first ?? numbered.perPage,
    cursor: { after: cursor.after === undefined ? null : decodeCursor(cursor.after) },
  };
}

/** Opaque to clients (they only hand it back): the row's creation time and id. */
export function encodeCursor(row: Cursor): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

// An id (`msg_…`) or a phone number's digits: the keys Tern's lists order by.
const CURSOR_ID = /^(?:[a-z]{2,8}_[0-9a-zA-Z]{1,64}|[0-9]{7,15})$/;

function decodeCursor(text: string): Cursor {
  const invalid = () =>
    new ValidationError(
      [{ field: 'after', issue: 'invalid_format' }],
      'after is not a cursor of this list: pass the endCursor of the page before',
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !CURSOR_ID.test(id)) throw invalid();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at) throw invalid();
  return { createdAt, id };
}

export function pageWindow({ page, perPage, cursor, lookahead = 0 }: PageRequest): {
  skip: number;
  take: number;
} {
  return { skip: cursor ? 0 : (page - 1) * perPage, take: perPage + lookahead };
}

/** The rows of a (created_at, key) order that come after the cursor, in Prisma's terms. */
function afterCursor(page: PageRequest, direction: 'asc' | 'desc', key: CursorKey) {
  const after = page.cursor?.after;
  if (!after) return {};
  const [upTo, beyond] = direction === 'desc' ? (['lte', 'lt'] as const) : (['gte', 'gt'] as const);
  // (created_at, id) beyond the cursor, spelt so that the first condition bounds the index range
  // and the second only sorts out the rows of the cursor's own time: PostgreSQL cannot start an
  // index scan from `a < x OR (a = x AND b < y)`, and Prisma cannot write a row comparison.
  return {
    createdAt: { [upTo]: after.createdAt },
    OR: [{ createdAt: { [beyond]: after.createdAt } }, { [key]: { [beyond]: after.id } }],
  };
}

/**
 * A page of a list in (created_at, id) order, ties by id, so that pages never overlap: by number
 * (OFFSET) or after a cursor (a keyset condition ANDed to `where`).
 */
function ordered<Where extends object>(
  where: Where,
  page: PageRequest,
  direction: 'asc' | 'desc',
  key: CursorKey = 'id',
) {
  return {
    where: { AND: [where, afterCursor(page, direction, key)] },
    orderBy: [{ createdAt: direction }, { [key]: direction }],
    ...pageWindow(page),
  };
}

/** A page of a list shown newest first; `key` breaks ties of created_at. */
export function newestFirst<Where extends object>(where: Where, page: PageRequest, key: CursorKey = 'id') {
  return ordered(where, page, 'desc', key);
}

/** A page of a list shown in the order its rows were added. */
export function oldestFirst<Where extends object>(where: Where, page: PageRequest) {
  return ordered(where, page, 'asc');
}
