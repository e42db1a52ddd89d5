/**
 * Event rows the message lifecycle writes, in the same transaction as the change. Their
 * payloads are the callback bodies of decisions.md without `id` and `created_at`, which the
 * webhook dispatcher adds from the row itself. The status changes (sent, delivered, failed) build
 * theirs in the statement that makes the change (MessageStatusChanges), in batches.
 */
export type MessageEventType = 'message.sent' | 'message.delivered' | 'message.failed' | 'message.replied';

interface MessageFacts {
  id: string;
  to: string;
  campaignId: string | null;
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
