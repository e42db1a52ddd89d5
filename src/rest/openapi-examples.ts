import { readFileSync } from 'node:fs';
import type { ErrorCode } from '../errors.js';

type Json = Record<string, unknown>;

/** What a real Tern answered to one route, and the request it answered. */
export interface OperationExamples {
  /** The JSON body, or the multipart form's fields, of the request that succeeded. */
  request?: Json;
  /** The path, query and header parameters of that request, by their /v1 name. */
  parameters?: Record<string, string>;
  /** The success answer. */
  response: Json;
  /** One answer for each error code the route's own requests were made to show. */
  errors: Partial<Record<ErrorCode, Json>>;
}

export interface ApiExamples {
  /** Answers whose body is the same on every route (a missing token, a rate limit, …), by code. */
  shared: Partial<Record<ErrorCode, Json>>;
  /** By operationId. */
  operations: Record<string, OperationExamples>;
}

/**
 * The examples of /v1/openapi.json: exchanges with a real Tern, recorded by
 * test/api-examples.test.ts (`npm run openapi:examples`), which also fails when they are no longer
 * what Tern answers. Committed, so that the document is built without running anything.
 */
export const API_EXAMPLES_FILE = new URL('../../schema/openapi-examples.json', import.meta.url);

export function readApiExamples(): ApiExamples {
  return JSON.parse(readFileSync(API_EXAMPLES_FILE, 'utf8')) as ApiExamples;
}
