import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { type PageRequest, pageWindow } from '../lib/pagination.js';

/** A child list of a parent row: where its rows are, which of them belong, in what order. */
export interface ChildList {
  /** The child table and its column naming the parent, as written in SQL (constants, never input). */
  table: string;
  parentColumn: string;
  /** The rows of the list beside the parent's (the account's, a filter), over the alias `child`. */
  where: Prisma.Sql;
  /** Over the alias `child`; must end on a unique column so that pages never overlap. */
  orderBy: Prisma.Sql;
}

/**
 * The ids of one page of a child list for each of several parents, in one statement: a LATERAL
 * subquery per parent with its own ORDER BY, OFFSET and LIMIT, so PostgreSQL reads each parent's
 * page (through an index on the parent column and the order, where there is one) and never the
 * rest of the list. Prisma's nested `take` does not do this: it reads every child of every
 * parent (`WHERE parent IN (…)`) and pages them in memory.
 */
export async function pageIdsPerParent(
  prisma: PrismaClient,
  list: ChildList,
  parentIds: readonly string[],
  page: PageRequest,
): Promise<Map<string, string[]>> {
  const { skip, take } = pageWindow(page);
  const rows = await prisma.$queryRaw<{ parent: string; id: string }[]>`
    SELECT parent.id AS parent, picked.id
    FROM unnest(${[...new Set(parentIds)]}::text[]) AS parent(id)
    CROSS JOIN LATERAL (
      SELECT child.id FROM ${Prisma.raw(list.table)} AS child
      WHERE child.${Prisma.raw(list.parentColumn)} = parent.id AND ${list.where}
      ORDER BY ${list.orderBy}
      OFFSET ${skip} LIMIT ${take}
    ) AS picked`;
  const pages = new Map<string, string[]>(parentIds.map((id) => [id, []]));
  for (const row of rows) pages.get(row.parent)!.push(row.id);
  return pages;
}

/** Each parent's page of rows, in the order of its ids; rows read once for all parents. */
export function inPageOrder<Row extends { id: string }>(
  pages: Map<string, string[]>,
  rows: Row[],
  parentIds: readonly string[],
): Row[][] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return parentIds.map((parent) => (pages.get(parent) ?? []).flatMap((id) => byId.get(id) ?? []));
}

/** Every id of every page, for the one query that reads their rows. */
export function allIds(pages: Map<string, string[]>): string[] {
  return [...pages.values()].flat();
}
