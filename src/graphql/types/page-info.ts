import type { Builder } from '../builder.js';

export interface PageInfo {
  endCursor: string | null;
  hasNextPage: boolean;
}

/**
 * The arguments of paging by cursor, beside `page`/`perPage` on every top-level list: a stable
 * walk through a list that grows meanwhile, as fast at its millionth row as at its first.
 */
export function cursorArgs(t: Parameters<Parameters<Builder['queryField']>[1]>[0]) {
  return {
    first: t.arg.int({
      description: 'Rows of a page read by cursor, 1..100 (default 20); instead of `page`',
    }),
    after: t.arg.string({
      description: 'The `pageInfo.endCursor` of the page before; omitted, the first page of a cursor walk',
    }),
  };
}
