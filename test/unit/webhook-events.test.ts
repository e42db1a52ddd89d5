import { describe, expect, it } from 'vitest';
import {
  campaignStatusPayload,
  eventBody,
  goesToCampaignUrl,
  isSubscribable,
  messageRepliedPayload,
  messageStatusPayload,
} from '../../src/modules/webhooks/webhook-events.js';

const createdAt = new Date('2026-11-21T10:00:00.000Z');
const message = { id: 'msg_1', to: '5511999990000', campaignId: 'cmp_1', sender: 'ACME' };

/** jsonb keeps an object's keys sorted by length, then bytes: the order a stored payload comes back in. */
function asStored(payload: object): unknown {
  const sort = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : 1))
            .map(([key, inner]) => [key, sort(inner)]),
        )
      : value;
  return sort(JSON.parse(JSON.stringify(payload)));
}

const keysOf = (body: string) => Object.keys(JSON.parse(body));

describe('webhook event payloads', () => {
  it('shape a failed message with its error, in the callback order whatever order the payload is stored in', () => {
    const payload = messageStatusPayload(message, {
      status: 'failed',
      at: createdAt,
      error: { code: 'unreachable', message: 'The destination is unreachable' },
    });
    const body = eventBody({ id: 'evt_1', type: 'message.failed', payload: asStored(payload), createdAt });
    expect(keysOf(body)).toEqual([
      'id',
      'event',
      'message',
      'to',
      'from',
      'status',
      'failed_at',
      'error',
      'campaign',
      'created_at',
    ]);
    expect(JSON.parse(body)).toEqual({
      id: 'evt_1',
      event: 'message.failed',
      message: 'msg_1',
      to: '5511999990000',
      from: 'ACME',
      status: 'failed',
      failed_at: '2026-11-21T10:00:00.000Z',
      error: { code: 'unreachable', message: 'The destination is unreachable' },
      campaign: 'cmp_1',
      created_at: '2026-11-21T10:00:00.000Z',
    });
    expect(Object.keys(JSON.parse(body).error)).toEqual(['code', 'message']);
  });

  it('shape deliveries and replies with their own time field', () => {
    const delivered = messageStatusPayload(
      { ...message, campaignId: null },
      { status: 'delivered', at: createdAt },
    );
    expect(
      keysOf(eventBody({ id: 'evt_2', type: 'message.delivered', payload: asStored(delivered), createdAt })),
    ).toEqual(['id', 'event', 'message', 'to', 'from', 'status', 'delivered_at', 'campaign', 'created_at']);
    expect(delivered.campaign).toBeNull();
    // The sender it went from; a reply's `from` is the mobile's number.
    expect(delivered.from).toBe('ACME');
    const replied = messageRepliedPayload(message, {
      id: 'inb_1',
      from: '5511999990000',
      text: 'STOP',
      receivedAt: createdAt,
    });
    expect(
      keysOf(eventBody({ id: 'evt_3', type: 'message.replied', payload: asStored(replied), createdAt })),
    ).toEqual(['id', 'event', 'message', 'inbound', 'from', 'text', 'replied_at', 'campaign', 'created_at']);
  });

  it('shape a campaign event with its stats under the API names, opted_out last', () => {
    const stats = {
      contacts: 5,
      waiting: 1,
      queued: 1,
      sent: 1,
      delivered: 1,
      failed: 1,
      replied: 1,
      optedOut: 1,
    };
    const payload = campaignStatusPayload('campaign.finished', 'cmp_1', 'finished', stats);
    const body = JSON.parse(
      eventBody({ id: 'evt_4', type: 'campaign.finished', payload: asStored(payload), createdAt }),
    );
    expect(Object.keys(body)).toEqual(['id', 'event', 'campaign', 'status', 'stats', 'created_at']);
    expect(body.stats).toEqual({
      contacts: 5,
      queued: 1,
      sent: 1,
      delivered: 1,
      failed: 1,
      replied: 1,
      waiting: 1,
      opted_out: 1,
    });
    expect(Object.keys(body.stats)).toEqual([
      'contacts',
      'queued',
      'sent',
      'delivered',
      'failed',
      'replied',
      'waiting',
      'opted_out',
    ]);
  });

  it('route message kinds to registrations and campaign URLs, campaign kinds to campaign URLs, message.sent nowhere', () => {
    expect(['message.delivered', 'message.failed', 'message.replied'].every(isSubscribable)).toBe(true);
    expect(isSubscribable('campaign.started')).toBe(false);
    expect(
      [
        'campaign.started',
        'campaign.paused',
        'campaign.finished',
        'campaign.cancelled',
        'message.failed',
      ].every(goesToCampaignUrl),
    ).toBe(true);
    expect(isSubscribable('message.sent') || goesToCampaignUrl('message.sent')).toBe(false);
  });
});
