import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

const byId = { params: { webhook: 'id' } };

export const webhookRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/webhooks',
    operation: 'RegisterWebhook',
    body: 'input',
    status: 201,
    summary: 'Register a webhook',
    description:
      "Register a URL for events; it must answer a signed webhook.ping with a 2xx (422 url unreachable otherwise). Answers the account's signing secret",
  },
  {
    method: 'GET',
    path: '/v1/webhooks',
    operation: 'Webhooks',
    query: PAGE_QUERY,
    status: 200,
    summary: 'List webhooks',
    description: 'List webhooks, newest first',
  },
  {
    method: 'POST',
    path: '/v1/webhooks/secret/rotate',
    operation: 'RotateWebhookSecret',
    status: 200,
    summary: 'Rotate the signing secret',
    description: 'A new signing secret for the account; the next attempt of every delivery is signed with it',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/:webhook',
    operation: 'Webhook',
    ...byId,
    status: 200,
    summary: 'Read a webhook',
    description: 'Read one webhook',
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/:webhook',
    operation: 'UpdateWebhook',
    ...byId,
    body: 'input',
    status: 200,
    summary: 'Change a webhook',
    description: 'Change url and/or events; a new url is pinged as at registration',
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/:webhook',
    operation: 'DeleteWebhook',
    ...byId,
    status: 200,
    summary: 'Delete a webhook',
    description: 'Delete a webhook; its pending deliveries stop',
  },
  {
    method: 'GET',
    path: '/v1/webhooks/:webhook/deliveries',
    operation: 'WebhookDeliveries',
    params: { webhook: 'webhook' },
    query: PAGE_QUERY,
    status: 200,
    summary: 'List deliveries',
    description: 'The delivery log: every attempt, newest first',
  },
  {
    method: 'POST',
    path: '/v1/webhooks/:webhook/replay',
    operation: 'ReplayWebhook',
    ...byId,
    body: 'input',
    status: 202,
    summary: 'Replay events',
    description:
      'Deliver past events again ({ since } up to 7 days back, or { event }), with their original id and body, newly signed',
  },
];
