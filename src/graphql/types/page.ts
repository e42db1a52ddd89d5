import type { ArgBuilder, SchemaTypes } from '@pothos/core';
import type PrismaTypes from '../../generated/pothos-prisma-types.js';
import { type CursorKey, encodeCursor, type PageRequest, pageInput } from '../../lib/pagination.js';
import type { Builder } from '../builder.js';
import type { Context } from '../context.js';
import { argsFromZod } from '../zod-input.js';
import type { PageInfo } from './page-info.js';

type Model = keyof PrismaTypes & string;

/** `page` and `perPage`, as the service parses them. */
export function pageArgs<Types extends SchemaTypes>(arg: ArgBuilder<Types>) {
  return argsFromZod(arg, pageInput);
}

export interface PageSource<Shape, Name extends Model> {
  /** The page's rows, with the selection Pothos computed spread into the query. */
  nodes(
    query: { select?: never; include?: never },
    shape: Shape,
    context: Context,
  ): Promise<PrismaTypes[Name]['Shape'][]>;
  total(shape: Shape, context: Context): Promise<number>;
  /** The column after created_at in the list's order, which a cursor names: `id` unless said. */
  cursorKey?: CursorKey;
}

/**
 * `{ nodes, page, perPage, total }` for a list: the resolver of the list field only parses
 * its arguments into `Shape`; rows and total are read when (and only if) they are selected.
 */
export function addPageType<Shape extends { page: PageRequest }, Name extends Model>(
  builder: Builder,
  name: string,
  model: Name,
  order: string,
  source: PageSource<Shape, Name>,
) {
  return builder.objectRef<Shape>(name).implement({
    description: `One page of a list of ${model} items`,
    fields: (t) => ({
      nodes: t.prismaField({
        type: [model] as [Model],
        description: order,
        // Counted by the page's own field, whose `perPage` multiplies everything selected here.
        complexity: { field: 1, multiplier: 1 },
        resolve: (query, shape, _args, context) => source.nodes(query as never, shape, context) as never,
      }),
      page: t.int({ description: 'The number of this page, from 1', resolve: (shape) => shape.page.page }),
      perPage: t.int({ description: 'Items per page', resolve: (shape) => shape.page.perPage }),
      total: t.int({
        description: 'Items in the whole list, every page together',
        resolve: (shape, _args, context) => source.total(shape, context),
      }),
      pageInfo: t.field({
        type: pageInfoRef(builder),
        description: 'Where this page ends, for reading on by cursor (`after: endCursor`)',
        resolve: async (shape, _args, context): Promise<PageInfo> => {
          // One row beyond the page tells whether there is a next one; only the keys are read.
          const { perPage } = shape.page;
          const key = source.cursorKey ?? 'id';
          const keys = (await source.nodes(
            { select: { [key]: true, createdAt: true } } as never,
            { ...shape, page: { ...shape.page, lookahead: 1 } },
            context,
          )) as unknown as (Record<CursorKey, string> & { createdAt: Date })[];
          const last = keys.slice(0, perPage).at(-1);
          return {
            endCursor: last ? encodeCursor({ createdAt: last.createdAt, id: last[key] }) : null,
            hasNextPage: keys.length > perPage,
          };
        },
      }),
    }),
  });
}

const pageInfoRefs = new WeakMap<Builder, ReturnType<typeof definePageInfo>>();

function definePageInfo(builder: Builder) {
  return builder.objectRef<PageInfo>('PageInfo').implement({
    description: 'The end of a page of a list, for paging by cursor',
    fields: (t) => ({
      endCursor: t.exposeString('endCursor', {
        nullable: true,
        description: 'The cursor of the page’s last row, to pass as `after`; null when the page is empty',
      }),
      hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether rows follow this page' }),
    }),
  });
}

/** One PageInfo type per schema, shared by every page type. */
function pageInfoRef(builder: Builder) {
  let ref = pageInfoRefs.get(builder);
  if (!ref) {
    ref = definePageInfo(builder);
    pageInfoRefs.set(builder, ref);
  }
  return ref;
}
