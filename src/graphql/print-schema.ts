import { lexicographicSortSchema, printSchema } from 'graphql';
import { loadConfig } from '../config.js';
import { closeDependencies, createDependencies } from '../deps.js';
import { createServices } from '../services.js';
import { createFieldRateLimits } from './field-rate-limits.js';
import { createSchema } from './schema.js';

export const SCHEMA_FILE = new URL('../../schema/schema.graphql', import.meta.url);

/** The SDL of the code-first schema, as committed in schema/schema.graphql. Connects to nothing. */
export async function printTernSchema(): Promise<string> {
  const deps = createDependencies(loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'silent' }));
  try {
    const schema = createSchema(createServices(deps), deps.prisma, { strictQueries: false, fieldRateLimits: createFieldRateLimits(deps) });
    return `${printSchema(lexicographicSortSchema(schema))}\n`;
  } finally {
    await closeDependencies(deps);
  }
}
