/**
 * Event rows the message lifecycle writes, in the same transaction as the change. Their
 * payloads are the callback bodies of decisions.md without `id` and `created_at`, which the
 * webhook dispatcher adds from the row itself.
 */
export type MessageEventType = 'message.sent' | 'message.delivered' | 'message.failed' | 'message.replied';

interface MessageFacts {
  id: string;
  to: string;
  campaignId: string | null;
}

export function sentPayload(message: MessageFacts, sentAt: Date) {
  return { event: 'message.sent', message: message.id, to: message.to, status: 'sent', sent_at: sentAt.toISOString(), campaign: message.campaignId };
}

export function deliveredPayload(message: MessageFacts, deliveredAt: Date) {
  return {
    event: 'message.delivered',
    message: message.id,
    to: message.to,
    status: 'delivered',
    delivered_at: deliveredAt.toISOString(),
    campaign: message.campaignId,
  };
}

export function failedPayload(message: MessageFacts, failedAt: Date, error: { code: string; message: string }) {
  return {
    event: 'message.failed',
    message: message.id,
    to: message.to,
    status: 'failed',
    failed_at: failedAt.toISOString(),
    error,
    campaign: message.campaignId,
  };
}

export function repliedPayload(message: MessageFacts, inbound: { id: string; from: string; text: string; receivedAt: Date }) {
  return {
    event: 'message.replied',
    message: message.id,
    inbound: inbound.id,
    from: inbound.from,
    text: inbound.text,
    replied_at: inbound.receivedAt.toISOString(),
    campaign: message.campaignId,
  };
}
