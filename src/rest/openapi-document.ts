import { createSchema } from '../graphql/schema.js';
import { buildOpenApi } from './openapi.js';
import { readApiExamples } from './openapi-examples.js';
import { OperationRegistry } from './operations.js';
import { routes } from './route-table.js';

/** The /v1 OpenAPI document as the service serves it, built with no configuration and no connection. */
export function ternOpenApi(allowInsecureWebhooks = false) {
  const schema = createSchema({ strictQueries: false, inputs: { allowInsecureWebhooks } });
  return buildOpenApi(routes, OperationRegistry.fromDirectory(schema), schema, readApiExamples());
}
