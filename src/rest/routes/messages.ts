import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

const sendMessage = {
  operation: 'SendMessage',
  body: 'input',
  headers: { 'Idempotency-Key': 'idempotencyKey' },
  status: 202,
  omitNull: ['campaign', 'send_at', 'waits_until', 'from'],
  responseHeaders: { replayed: 'Idempotent-Replayed' },
} as const;

export const messageRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/messages/send',
    ...sendMessage,
    summary: 'Send a message',
    description:
      'Send one SMS; answers 202 once the message is stored. Idempotency-Key makes a retry safe for 24 hours',
  },
  {
    method: 'POST',
    path: '/v1/messages',
    ...sendMessage,
    operationId: 'CreateMessage',
    summary: 'Send a message (alias)',
    description: 'The same as POST /v1/messages/send',
  },
  {
    method: 'POST',
    path: '/v1/messages/preview',
    operation: 'PreviewMessage',
    body: 'input',
    status: 200,
    summary: 'Preview a message',
    description: 'Encoding, segments and the characters that force UCS-2, for a text; sends nothing',
  },
  {
    method: 'GET',
    path: '/v1/messages',
    operation: 'Messages',
    query: { status: 'status', campaign: 'campaign', to: 'to', ...PAGE_QUERY },
    status: 200,
    summary: 'List messages',
    description: 'List messages, newest first, filtered by status, campaign or destination',
  },
  {
    method: 'GET',
    path: '/v1/messages/:message',
    operation: 'Message',
    params: { message: 'id' },
    status: 200,
    summary: 'Read a message',
    description: 'Read one message: its status, when it reached each status, and why it failed',
  },
  {
    method: 'POST',
    path: '/v1/messages/:message/cancel',
    operation: 'CancelMessage',
    params: { message: 'id' },
    status: 200,
    summary: 'Cancel a scheduled message',
    description:
      'Cancel a message still scheduled (waiting for its send_at or its window); 409 invalid_state once it is on its way',
  },
];
