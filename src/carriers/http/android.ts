import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { OutboundSms } from '../carrier.js';
import {
  headerOf,
  parseJsonObject,
  plusNumber,
  remainingValidity,
  statusAnswer,
  withoutPlus,
} from './http-answers.js';
import type {
  HttpProvider,
  ProviderAnswer,
  ProviderCallback,
  ProviderEvent,
  ProviderRequest,
  ProviderResponse,
  ProviderSettings,
  SendContext,
} from './http-provider.js';

// The "SMS Gateway for Android" app: its local server on the phone (http://PHONE:8080/…), or its
// cloud or private server (…/3rdparty/v1/…), HTTP Basic with the app's user and password.
// POST /message takes {id, textMessage, phoneNumbers, ttl} and answers 202 {id, state}; the id is
// ours, and the app refuses a second message with it (409). Webhooks, which Tern registers at
// start, POST JSON {event, payload, id, deviceId, webhookId} signed in X-Signature: hex
// HMAC-SHA256, keyed by the signing key, of the raw body followed by X-Timestamp (unix seconds).

/** The cloud server's host, whose API lives under CLOUD_PREFIX when the URL gives no path. */
const CLOUD_HOST = 'api.sms-gate.app';
const CLOUD_PREFIX = '/3rdparty/v1';
/** A signed webhook older or newer than this is refused as a replay. */
const SIGNATURE_WINDOW_SECONDS = 300;
// The app keeps trying a message for `ttl` seconds; it sets no upper bound.
const TTL_SECONDS = { min: 1, max: Number.MAX_SAFE_INTEGER };
/**
 * The events Tern registers: replies and the two final outcomes. sms:sent is left out: it changes
 * no status of Tern's, and the phone would post it for every message.
 */
export const ANDROID_WEBHOOK_EVENTS = ['sms:received', 'sms:delivered', 'sms:failed'] as const;

function invalid(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (android://USER:PASSWORD@PHONE:8080?tls=false for the app's local server, android://USER:PASSWORD@${CLOUD_HOST} for its cloud server)`,
  );
}

/**
 * A webhook id the same on every start for this carrier and event, so that registering again
 * replaces the registration instead of adding one. The servers keep at most 36 characters.
 */
export function androidWebhookId(carrier: string, event: string): string {
  return `tern-${createHash('sha256').update(`${carrier}\n${event}`).digest('hex').slice(0, 31)}`;
}

/** The hex HMAC-SHA256 the app puts in X-Signature. */
export function androidSignature(signingKey: string, rawBody: Buffer, timestamp: string): string {
  return createHmac('sha256', signingKey)
    .update(Buffer.concat([rawBody, Buffer.from(timestamp, 'utf8')]))
    .digest('hex');
}

function apiPrefix(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  if (path) return path;
  return url.hostname === CLOUD_HOST ? CLOUD_PREFIX : '';
}

export function createAndroidProvider(settings: ProviderSettings): HttpProvider {
  const user = decodeURIComponent(settings.url.username);
  if (!user || !settings.secret) throw invalid("the user and password must be the app's credentials");
  const api = `${settings.baseUrl}${apiPrefix(settings.url)}`;
  const authorization = `Basic ${Buffer.from(`${user}:${settings.secret}`).toString('base64')}`;
  const json = (method: ProviderRequest['method'], path: string, body: unknown): ProviderRequest => ({
    method,
    url: `${api}${path}`,
    headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });

  return {
    kind: 'android',
    deduplicatesByReference: true,
    request(sms: OutboundSms, context: SendContext) {
      const ttl = sms.validUntil ? remainingValidity(sms.validUntil, context.now, 1_000, TTL_SECONDS) : null;
      return json('POST', '/message', {
        id: sms.reference,
        textMessage: { text: sms.text },
        phoneNumbers: [plusNumber(sms.to)],
        withDeliveryReport: true,
        ...(ttl === null ? {} : { ttl }),
      });
    },
    answer: readAnswer,
    // The signing key first, so that the first webhook is already signed with Tern's key.
    startRequests(context: SendContext) {
      if (!context.callbackUrl) return [];
      const url = context.callbackUrl;
      return [
        json('PATCH', '/settings', { webhooks: { signing_key: settings.callbackSecret } }),
        ...ANDROID_WEBHOOK_EVENTS.map((event) =>
          json('POST', '/webhooks', { id: androidWebhookId(settings.carrier, event), url, event }),
        ),
      ];
    },
    verify(call: ProviderCallback, now: Date) {
      const signature = headerOf(call.headers, 'x-signature');
      const timestamp = headerOf(call.headers, 'x-timestamp');
      if (!signature || !timestamp || !/^[0-9]{1,12}$/.test(timestamp) || !settings.callbackSecret)
        return false;
      if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
      const expected = Buffer.from(androidSignature(settings.callbackSecret, call.rawBody, timestamp));
      const given = Buffer.from(signature.trim().toLowerCase());
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
    events: readWebhook,
  };
}

/**
 * 202 {id, state}: taken under our id. 409 is the app refusing an id it has already: the message
 * a retried hand-over repeats was taken the first time, under that id.
 */
function readAnswer(response: ProviderResponse, sms: OutboundSms): ProviderAnswer {
  const body = parseJsonObject(response.body);
  if (response.status === 409) return { outcome: 'accepted', providerMessageId: sms.reference };
  if (response.status < 200 || response.status >= 300) {
    const text = typeof body?.message === 'string' ? body.message : response.body.slice(0, 200);
    return statusAnswer(response.status, null, text);
  }
  const id = typeof body?.id === 'string' && body.id ? body.id : null;
  if (!id) return { outcome: 'temporary', message: `HTTP ${response.status} without a message id` };
  if (body?.state === 'Failed') {
    const recipients = Array.isArray(body.recipients) ? body.recipients : [];
    const error = (recipients[0] as Record<string, unknown> | undefined)?.error;
    return {
      outcome: 'rejected',
      code: 'failed',
      message: typeof error === 'string' ? error : 'the phone failed it',
    };
  }
  return { outcome: 'accepted', providerMessageId: id };
}

function text(payload: Record<string, unknown>, ...fields: string[]): string | null {
  for (const field of fields) {
    const value = payload[field];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}

function timeOf(value: string | null, fallback: Date): Date {
  const at = value ? new Date(value) : null;
  return at && !Number.isNaN(at.getTime()) ? at : fallback;
}

/**
 * A webhook's events. Reports name the message by the id we gave it; sms:delivered comes once
 * per part, and the first is enough. A reply is known by the webhook's own id, which stays the
 * same when the phone retries it (the payload's messageId is derived from the content, so two
 * identical replies would share it). Payload fields are read under their current names and the
 * names of earlier app versions (phoneNumber, error).
 */
function readWebhook(call: ProviderCallback, now: Date): ProviderEvent[] {
  const body = parseJsonObject(call.rawBody.toString('utf8'));
  const payload = body?.payload;
  if (!body || payload === null || typeof payload !== 'object') return [];
  const fields = payload as Record<string, unknown>;
  const messageId = text(fields, 'messageId');
  switch (body.event) {
    case 'sms:delivered': {
      if (!messageId) return [];
      const at = timeOf(text(fields, 'deliveredAt'), now);
      return [
        {
          kind: 'report',
          report: { carrierMessageId: messageId, reference: messageId, status: 'delivered', at },
        },
      ];
    }
    case 'sms:failed': {
      if (!messageId) return [];
      const at = timeOf(text(fields, 'failedAt'), now);
      const error = {
        code: 'carrier_failed',
        message: text(fields, 'reason', 'error') ?? 'the phone could not send it',
      };
      return [
        {
          kind: 'report',
          report: { carrierMessageId: messageId, reference: messageId, status: 'failed', at, error },
        },
      ];
    }
    case 'sms:received':
      return readReceived(body, fields, now);
    default:
      return [];
  }
}

function readReceived(
  body: Record<string, unknown>,
  fields: Record<string, unknown>,
  now: Date,
): ProviderEvent[] {
  const id = typeof body.id === 'string' && body.id ? body.id : text(fields, 'messageId');
  const from = text(fields, 'sender', 'phoneNumber');
  const message = typeof fields.message === 'string' ? fields.message : null;
  if (!id || !from || message === null) return [];
  const to = text(fields, 'recipient');
  return [
    {
      kind: 'reply',
      reply: {
        carrierMessageId: id,
        from: withoutPlus(from),
        to: to ? withoutPlus(to) : null,
        text: message,
        at: timeOf(text(fields, 'receivedAt'), now),
      },
    },
  ];
}
