import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

export const apiKeyRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/api-keys',
    operation: 'CreateApiKey',
    loginTokenOnly: true,
    body: 'input',
    status: 201,
    summary: 'Create an API key',
    description:
      'Create an API key ({ name, expires_at? }); the answer is the only one that shows the key. Needs a login token (403 forbidden with an API key)',
  },
  {
    method: 'GET',
    path: '/v1/api-keys',
    operation: 'ApiKeys',
    query: PAGE_QUERY,
    status: 200,
    summary: 'List API keys',
    description: 'List the API keys, newest first (never the keys themselves)',
  },
  {
    method: 'DELETE',
    path: '/v1/api-keys/:apikey',
    operation: 'RevokeApiKey',
    loginTokenOnly: true,
    params: { apikey: 'id' },
    status: 200,
    summary: 'Revoke an API key',
    description:
      'Revoke an API key: refused from the next request on. Needs a login token (403 forbidden with an API key)',
  },
];
