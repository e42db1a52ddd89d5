import type PrismaTypes from '../../generated/pothos-prisma-types.js';
import type { PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import type { Context } from '../context.js';

type Model = keyof PrismaTypes & string;

export interface PageSource<Shape, Name extends Model> {
  /** The page's rows, with the selection Pothos computed spread into the query. */
  nodes(query: { select?: never; include?: never }, shape: Shape, context: Context): Promise<PrismaTypes[Name]['Shape'][]>;
  total(shape: Shape, context: Context): Promise<number>;
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
    fields: (t) => ({
      nodes: t.prismaField({
        type: [model] as [Model],
        description: order,
        // Counted by the page's own field, whose `perPage` multiplies everything selected here.
        complexity: { field: 1, multiplier: 1 },
        resolve: (query, shape, _args, context) => source.nodes(query as never, shape, context) as never,
      }),
      page: t.int({ resolve: (shape) => shape.page.page }),
      perPage: t.int({ resolve: (shape) => shape.page.perPage }),
      total: t.int({ resolve: (shape, _args, context) => source.total(shape, context) }),
    }),
  });
}
