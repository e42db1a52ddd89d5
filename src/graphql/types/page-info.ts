import { cursorInput } from '../../lib/pagination.js';
import type { Builder } from '../builder.js';
import { argsFromZod } from '../zod-input.js';

export interface PageInfo {
  endCursor: string | null;
  hasNextPage: boolean;
}

/**
 * The arguments of paging by cursor, beside `page`/`perPage` on every top-level list: a stable
 * walk through a list that grows meanwhile, as fast at its millionth row as at its first.
 */
export function cursorArgs(t: Parameters<Parameters<Builder['queryField']>[1]>[0]) {
  return argsFromZod(t.arg, cursorInput);
}
