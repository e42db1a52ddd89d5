import { Prisma } from '../generated/prisma/client.js';

/**
 * A relation that one fragment of a statement makes (a CTE, or the rows a RETURNING gives) and
 * other fragments read: its name, and each column as the qualified reference a reader writes.
 * A fragment states the columns it reads in its parameter's type (`SqlRelation<'a' | 'b'>`), and
 * the maker's relation is made from the very list its SELECT or RETURNING is written from, so a
 * column renamed or left out where the relation is made fails the type check, not the statement.
 */
export interface SqlRelation<Column extends string> {
  /** The relation's name, to write after FROM or before AS. */
  name: Prisma.Sql;
  /** Each column, qualified by the relation's name (raw SQL text: names written in the code only). */
  column: { readonly [Name in Column]: string };
}

/**
 * The relation named `name` with `columns`, made by a column list (`AS v(a, b)`): `names` is
 * that list, for the maker to write.
 */
export function sqlColumns<Column extends string>(
  name: string,
  columns: readonly Column[],
): SqlRelation<Column> & { names: Prisma.Sql } {
  const column = Object.fromEntries(columns.map((key) => [key, `${name}."${key}"`])) as {
    [Name in Column]: string;
  };
  return { name: Prisma.raw(name), column, names: Prisma.raw(columns.map((key) => `"${key}"`).join(', ')) };
}

/** The relation named `name`, whose columns are the keys of `expressions`. */
export function sqlRelation<Column extends string>(
  name: string,
  expressions: { readonly [Name in Column]: string },
): SqlRelation<Column> & {
  /** `expression AS "column", …`: the SELECT or RETURNING list that makes the relation's columns. */
  select: Prisma.Sql;
} {
  const names = Object.keys(expressions) as Column[];
  const column = Object.fromEntries(names.map((key) => [key, `${name}."${key}"`])) as {
    [Name in Column]: string;
  };
  const select = names.map((key) => `${expressions[key]} AS "${key}"`).join(', ');
  return { name: Prisma.raw(name), column, select: Prisma.raw(select) };
}
