import type { RestRoute } from '../route-table.js';

export const statsRoutes: readonly RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/stats/messages',
    operation: 'MessageStats',
    query: { from: 'from', to: 'to', interval: 'interval', campaign: 'campaign', group_by: 'groupBy' },
    status: 200,
    summary: 'Message statistics',
    description:
      "Messages, segments, deliveries, failures, replies and opt-outs per hour or day of the account's time zone (interval: hour or day; group_by: a comma-separated list of status, country, carrier, campaign, each counted once); at most 1,000 buckets and 400 days",
  },
];
