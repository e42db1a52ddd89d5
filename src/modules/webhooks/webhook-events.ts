import { Prisma } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import type { CampaignStats } from '../campaigns/campaign-stats.js';

/**
 * The events Tern tells of, defined once: every kind, the fields of its callback body in their
 * order, how each payload is made, where each kind may go, and the bytes of the body. An event
 * is a row written in the same transaction as the change it tells of; its payload is the body
 * without `id` and `created_at`, which the row gives.
 */

const CAMPAIGN_FIELDS = ['event', 'campaign', 'status', 'stats'] as const;

const EVENT_FIELDS = {
  'message.sent': ['event', 'message', 'to', 'from', 'status', 'sent_at', 'campaign'],
  'message.delivered': ['event', 'message', 'to', 'from', 'status', 'delivered_at', 'campaign'],
  'message.failed': ['event', 'message', 'to', 'from', 'status', 'failed_at', 'error', 'campaign'],
  'message.replied': ['event', 'message', 'inbound', 'from', 'text', 'replied_at', 'campaign'],
  'campaign.started': CAMPAIGN_FIELDS,
  'campaign.paused': CAMPAIGN_FIELDS,
  'campaign.finished': CAMPAIGN_FIELDS,
  'campaign.cancelled': CAMPAIGN_FIELDS,
  'verification.approved': ['event', 'verification', 'to', 'status', 'approved_at'],
  'verification.expired': ['event', 'verification', 'to', 'status', 'expired_at'],
  'account.country_blocked': ['event', 'country', 'rule', 'blocked_until'],
} as const;

const NESTED_FIELDS: Record<string, readonly string[]> = {
  error: ['code', 'message'],
  stats: ['contacts', 'queued', 'sent', 'delivered', 'failed', 'replied', 'waiting', 'opted_out'],
};

export type EventType = keyof typeof EVENT_FIELDS;
export type CampaignEventType = Extract<EventType, `campaign.${string}`>;
type JsonValue = Prisma.InputJsonValue | null;
export type EventPayload<Type extends EventType> = {
  [Field in (typeof EVENT_FIELDS)[Type][number]]: JsonValue;
};

export const SUBSCRIBABLE_EVENTS = [
  'message.delivered',
  'message.failed',
  'message.replied',
  'verification.approved',
  'verification.expired',
  'account.country_blocked',
] as const satisfies readonly EventType[];
type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

const CAMPAIGN_EVENTS: readonly string[] = Object.keys(EVENT_FIELDS).filter((type) =>
  type.startsWith('campaign.'),
);

/** The message an event tells of. */
export interface MessageSubject {
  id: string;
  to: string;
  campaignId: string | null;
  /** The sender it goes from, where the caller knows it; the status change's statement writes the row's. */
  sender?: string | null;
}

export interface MessageStatusEvent {
  status: 'sent' | 'delivered' | 'failed';
  at: Date;
  error?: { code: string; message: string };
}

export function messageStatusPayload(message: MessageSubject, { status, at, error }: MessageStatusEvent) {
  const common = {
    event: `message.${status}`,
    message: message.id,
    to: message.to,
    from: message.sender ?? null,
    status,
    campaign: message.campaignId,
  };
  switch (status) {
    case 'sent':
      return { ...common, sent_at: at.toISOString() } satisfies EventPayload<'message.sent'>;
    case 'delivered':
      return { ...common, delivered_at: at.toISOString() } satisfies EventPayload<'message.delivered'>;
    case 'failed':
      return {
        ...common,
        failed_at: at.toISOString(),
        error: { code: error?.code ?? null, message: error?.message ?? null },
      } satisfies EventPayload<'message.failed'>;
  }
}

export function messageRepliedPayload(
  message: MessageSubject,
  inbound: { id: string; from: string; text: string; receivedAt: Date },
): EventPayload<'message.replied'> {
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

export function campaignStatusPayload(
  type: CampaignEventType,
  campaignId: string,
  status: string,
  stats: CampaignStats,
): EventPayload<CampaignEventType> {
  return {
    event: type,
    campaign: campaignId,
    status,
    stats: {
      contacts: stats.contacts,
      queued: stats.queued,
      sent: stats.sent,
      delivered: stats.delivered,
      failed: stats.failed,
      replied: stats.replied,
      waiting: stats.waiting,
      opted_out: stats.optedOut,
    },
  };
}

/** A verification's approval as an event: never its code. */
export function verificationApprovedPayload(
  verification: { id: string; to: string },
  at: Date,
): EventPayload<'verification.approved'> {
  const { id, to } = verification;
  return {
    event: 'verification.approved',
    verification: id,
    to,
    status: 'approved',
    approved_at: at.toISOString(),
  };
}

export function verificationExpiredPayload(
  verification: { id: string; to: string },
  at: Date,
): EventPayload<'verification.expired'> {
  const { id, to } = verification;
  return {
    event: 'verification.expired',
    verification: id,
    to,
    status: 'expired',
    expired_at: at.toISOString(),
  };
}

/** The fraud guard blocked a country for the account: its cap was reached (src/modules/fraud-guard). */
export function countryBlockedPayload(
  country: string,
  rule: 'country_hourly' | 'country_daily',
  blockedUntil: Date,
): EventPayload<'account.country_blocked'> {
  return { event: 'account.country_blocked', country, rule, blocked_until: blockedUntil.toISOString() };
}

/**
 * The one statement that writes event rows. `rows` is a query (a `SELECT` or `VALUES`) whose
 * columns are, in this order: the event's id, account, type, payload (jsonb), campaign, message
 * and time. `writeEvent` writes one row with it; the message statements write theirs from the
 * rows they changed, in the same statement as the change.
 */
export function insertEvents(rows: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`INSERT INTO events (id, account_id, type, payload, campaign_id, message_id, created_at) ${rows}`;
}

/** Writes an event row inside the transaction of the change it tells of. */
export async function writeEvent<Type extends EventType>(
  tx: Prisma.TransactionClient,
  event: {
    type: Type;
    payload: EventPayload<Type>;
    accountId: string;
    campaignId: string | null;
    messageId?: string;
    at: Date;
  },
): Promise<void> {
  await tx.$executeRaw(
    insertEvents(
      Prisma.sql`VALUES (${newId('evt')}, ${event.accountId}, ${event.type}, ${JSON.stringify(event.payload)}::jsonb,
        ${event.campaignId}, ${event.messageId ?? null}, ${event.at.toISOString()}::timestamptz)`,
    ),
  );
}

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

interface EventForBody {
  id: string;
  type: string;
  payload: unknown;
  createdAt: Date;
}

/**
 * The callback body: `id` first, the payload's fields in their order, then `created_at`.
 * Serialised once per event and stored, so that every attempt and every replay sends the same
 * bytes. Rows keep payloads as jsonb, which sorts keys its own way: the order comes from here.
 */
export function eventBody(event: EventForBody): string {
  const payload = isObject(event.payload) ? event.payload : {};
  const order: readonly string[] = EVENT_FIELDS[event.type as EventType] ?? [];
  return JSON.stringify({
    id: event.id,
    ...ordered(payload, order),
    created_at: event.createdAt.toISOString(),
  });
}

/** The registration check: signed like any callback, answered 2xx by a working endpoint. */
export function pingBody(id: string, at: Date): string {
  return JSON.stringify({ id, event: 'webhook.ping', created_at: at.toISOString() });
}

function ordered(value: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of [
    ...order.filter((key) => key in value),
    ...Object.keys(value).filter((key) => !order.includes(key)),
  ]) {
    const inner = value[key];
    result[key] = isObject(inner) && NESTED_FIELDS[key] ? ordered(inner, NESTED_FIELDS[key]) : inner;
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
