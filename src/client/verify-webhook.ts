import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a callback's timestamp may be from the receiver's clock, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** A callback body: `id` (the same on every retry and replay: deduplicate on it), `event`, `created_at` and the event's fields. */
export interface WebhookEvent {
  id: string;
  event: string;
  created_at: string;
  [field: string]: unknown;
}

export type WebhookVerification =
  | { ok: true; event: WebhookEvent }
  | {
      ok: false;
      reason: 'missing_headers' | 'invalid_timestamp' | 'stale_timestamp' | 'bad_signature' | 'invalid_body';
    };

/** Node's `IncomingHttpHeaders`, any plain object of headers, or a fetch `Headers`. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

/**
 * Checks a callback as docs/webhooks.md asks a receiver to: both headers present, the timestamp
 * within 5 minutes of `now`, and `X-Service-Signature` equal, in constant time, to
 * `sha256=` HMAC-SHA256(secret, timestamp + "." + rawBody). Pass the body exactly as received
 * (the bytes, not a re-serialised parse). The event's `id` is the key for idempotency.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  now: Date = new Date(),
): WebhookVerification {
  const signature = header(headers, 'x-service-signature');
  const timestamp = header(headers, 'x-service-timestamp');
  if (!signature || !timestamp) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'invalid_timestamp' };
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS)
    return { ok: false, reason: 'stale_timestamp' };

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`,
    'utf8',
  );
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad_signature' };

  try {
    const event = JSON.parse(body.toString('utf8')) as WebhookEvent;
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string')
      return { ok: false, reason: 'invalid_body' };
    return { ok: true, event };
  } catch {
    return { ok: false, reason: 'invalid_body' };
  }
}

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name);
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return (Array.isArray(entry) ? entry[0] : entry) ?? null;
}
