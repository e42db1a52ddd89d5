/**
 * The event kinds callbacks carry, where each may go, and the bytes of its body.
 */
export const SUBSCRIBABLE_EVENTS = ['message.delivered', 'message.failed', 'message.replied'] as const;
type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

const CAMPAIGN_EVENTS: readonly string[] = ['campaign.started', 'campaign.paused', 'campaign.finished', 'campaign.cancelled'];

/** A registration may subscribe to the message kinds only. */
export function isSubscribable(type: string): type is SubscribableEvent {
  return (SUBSCRIBABLE_EVENTS as readonly string[]).includes(type);
}

/**
 * A campaign's own URL gets the message events of its messages, whatever any registration
 * subscribes to, and its campaign.* events. Every other kind (`message.sent`) goes nowhere.
 */
export function goesToCampaignUrl(type: string): boolean {
  return isSubscribable(type) || CAMPAIGN_EVENTS.includes(type);
}

// decisions.md's field order. Rows keep payloads as jsonb, which sorts keys its own way.
const FIELD_ORDER: Record<string, readonly string[]> = {
  'message.delivered': ['event', 'message', 'to', 'status', 'delivered_at', 'campaign'],
  'message.failed': ['event', 'message', 'to', 'status', 'failed_at', 'error', 'campaign'],
  'message.replied': ['event', 'message', 'inbound', 'from', 'text', 'replied_at', 'campaign'],
  ...Object.fromEntries(CAMPAIGN_EVENTS.map((type) => [type, ['event', 'campaign', 'status', 'stats']])),
};
const NESTED_ORDER: Record<string, readonly string[]> = {
  error: ['code', 'message'],
  stats: ['contacts', 'queued', 'sent', 'delivered', 'failed', 'replied'],
};

interface EventForBody {
  id: string;
  type: string;
  payload: unknown;
  createdAt: Date;
}

/**
 * The callback body: `id` first, the payload's fields, then `created_at`. Serialised once per
 * event and stored, so that every attempt and every replay sends the same bytes.
 */
export function eventBody(event: EventForBody): string {
  const payload = isObject(event.payload) ? event.payload : {};
  return JSON.stringify({ id: event.id, ...ordered(payload, FIELD_ORDER[event.type] ?? []), created_at: event.createdAt.toISOString() });
}

/** The registration check: signed like any callback, answered 2xx by a working endpoint. */
export function pingBody(id: string, at: Date): string {
  return JSON.stringify({ id, event: 'webhook.ping', created_at: at.toISOString() });
}

function ordered(value: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of [...order.filter((key) => key in value), ...Object.keys(value).filter((key) => !order.includes(key))]) {
    const inner = value[key];
    result[key] = isObject(inner) && NESTED_ORDER[key] ? ordered(inner, NESTED_ORDER[key]) : inner;
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
