import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/client/index.js';
import { signatureHeaders } from '../../src/modules/webhooks/webhook-signature.js';

const secret = 'whsec_unit-test-secret';
const body = JSON.stringify({
  id: 'evt_1',
  event: 'message.delivered',
  created_at: '2026-11-21T10:00:00.000Z',
});
const sentAt = new Date('2026-11-21T10:00:00.500Z');

describe('webhook signing', () => {
  it('signs with the time in whole seconds and a hex HMAC-SHA256 that the receiver check accepts', () => {
    const headers = signatureHeaders(secret, body, sentAt);
    expect(headers['x-service-timestamp']).toBe('1795255200');
    expect(headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyWebhook(secret, headers, body, sentAt)).toEqual({ ok: true, event: JSON.parse(body) });
    expect(verifyWebhook(secret, new Headers(headers), Buffer.from(body), sentAt)).toMatchObject({
      ok: true,
    });
  });

  it('fails the check for another body, another secret or another timestamp', () => {
    const headers = signatureHeaders(secret, body, sentAt);
    expect(verifyWebhook(secret, headers, body.replace('evt_1', 'evt_2'), sentAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyWebhook('whsec_other', headers, body, sentAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyWebhook(secret, { ...headers, 'x-service-timestamp': '1795255201' }, body, sentAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('takes a signature for five minutes either way of the receiver clock', () => {
    const headers = signatureHeaders(secret, body, sentAt);
    const later = (seconds: number) => new Date(sentAt.getTime() + seconds * 1000);
    // The timestamp is 10:00:00; the callback left at 10:00:00.500.
    expect(verifyWebhook(secret, headers, body, later(299))).toMatchObject({ ok: true });
    expect(verifyWebhook(secret, headers, body, later(-300))).toMatchObject({ ok: true });
    expect(verifyWebhook(secret, headers, body, later(300))).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifyWebhook(secret, headers, body, later(-301))).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifyWebhook(secret, {}, body, sentAt)).toEqual({ ok: false, reason: 'missing_headers' });
  });
});
