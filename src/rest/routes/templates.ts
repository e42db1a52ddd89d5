import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

export const templateRoutes: readonly RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/templates',
    operation: 'Templates',
    query: PAGE_QUERY,
    status: 200,
    summary: 'List templates',
    description: 'List templates, newest first',
  },
  {
    method: 'POST',
    path: '/v1/templates',
    operation: 'CreateTemplate',
    body: 'input',
    status: 201,
    summary: 'Create a template',
    description: 'Create a template: name 3..80 characters, content 1..1600 with {{placeholders}}',
  },
  {
    method: 'GET',
    path: '/v1/templates/:template',
    operation: 'Template',
    params: { template: 'id' },
    status: 200,
    summary: 'Read a template',
    description: 'Read one template',
  },
  {
    method: 'PATCH',
    path: '/v1/templates/:template',
    operation: 'UpdateTemplate',
    params: { template: 'id' },
    body: 'input',
    status: 200,
    summary: 'Change a template',
    description: 'Change a template: content required, name optional',
  },
  {
    method: 'DELETE',
    path: '/v1/templates/:template',
    operation: 'DeleteTemplate',
    params: { template: 'id' },
    status: 200,
    summary: 'Delete a template',
    description: 'Delete a template; 409 conflict while a campaign uses it',
  },
];
