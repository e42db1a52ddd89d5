import { createHmac } from 'node:crypto';

/**
 * The headers that sign a callback: the Unix time in seconds, and `sha256=` HMAC-SHA256 keyed
 * with the whole secret over `timestamp + "." + body`, in hex. verifyWebhook (src/client) checks them.
 */
export function signatureHeaders(
  secret: string,
  body: string,
  at: Date,
): Record<'x-service-signature' | 'x-service-timestamp', string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'x-service-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
    'x-service-timestamp': String(timestamp),
  };
}
