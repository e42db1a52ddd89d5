import { accountRoutes } from './routes/accounts.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { campaignRoutes } from './routes/campaigns.js';
import { importRoutes } from './routes/imports.js';
import { messageRoutes } from './routes/messages.js';
import { optOutRoutes } from './routes/opt-outs.js';
import { statsRoutes } from './routes/stats.js';
import { templateRoutes } from './routes/templates.js';
import { verificationRoutes } from './routes/verifications.js';
import { webhookRoutes } from './routes/webhooks.js';

/**
 * The /v1 REST compatibility layer, as data (one file of routes per area in ./routes): each
 * route names the GraphQL operation (schema/operations/*.graphql) that implements it and where
 * its variables come from.
 * The operation's aliases give the response its /v1 field names; the success body is the
 * operation's single root field plus `request`. No rule of the service belongs here.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RestRoute {
  method: HttpMethod;
  /** Path with `:name` parameters. */
  path: string;
  operation: string;
  /** The document's operationId when another route runs the same operation (the default is `operation`). */
  operationId?: string;
  status: number;
  /** A few words, the operation's title in the reference (`Send a message`). */
  summary: string;
  /** What it does, in a sentence or two: the reference's text and docs/rest-api.md's. */
  description: string;
  /** Reachable without a bearer token (the schema enforces it; test/route-flags.test.ts holds the flag to it). */
  public?: boolean;
  /** Refused to an API key (403 forbidden): only a login token may (the domain enforces it; test/route-flags.test.ts holds the flag to it). */
  loginTokenOnly?: boolean;
  /** Path parameter → variable. */
  params?: Record<string, string>;
  /** Query parameter → variable. */
  query?: Record<string, string>;
  /** Variable that receives the JSON body, its keys turned from snake_case into camelCase. */
  body?: string;
  /**
   * The body is multipart/form-data instead of JSON: the file part `field` becomes an Upload
   * in `variable` (at most `maxBytes`, 413 beyond), and the text fields are the body (`body`),
   * read as the body variable's field types (`true`, `2`).
   */
  upload?: { field: string; variable: string; maxBytes: number };
  /** Request header → variable. */
  headers?: Record<string, string>;
  /**
   * Response fields that travel as headers instead (`replayed` → `Idempotent-Replayed: true`):
   * taken out of the body, and the header sent only when the field is true.
   */
  responseHeaders?: Record<string, string>;
  /** Response fields left out when null (the /v1 contract shows them only when they have a value). */
  omitNull?: readonly string[];
}

export const routes: readonly RestRoute[] = [
  ...accountRoutes,
  ...apiKeyRoutes,
  ...messageRoutes,
  ...campaignRoutes,
  ...importRoutes,
  ...templateRoutes,
  ...webhookRoutes,
  ...optOutRoutes,
  ...statsRoutes,
  ...verificationRoutes,
];
