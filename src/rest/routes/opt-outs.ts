import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

export const optOutRoutes: readonly RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/opt-outs',
    operation: 'OptOuts',
    query: PAGE_QUERY,
    status: 200,
    summary: 'List opt-outs',
    description: 'List the numbers that opted out of the account (replied STOP), newest first',
  },
];
