import { lexicographicSortSchema, printSchema } from 'graphql';
import { createSchema } from './schema.js';

export const SCHEMA_FILE = new URL('../../schema/schema.graphql', import.meta.url);

/** The SDL of the code-first schema, as committed in schema/schema.graphql. Needs no configuration and no connection. */
export function printTernSchema(): string {
  return `${printSchema(lexicographicSortSchema(createSchema({ strictQueries: false })))}\n`;
}
