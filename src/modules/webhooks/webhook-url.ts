import { z } from 'zod';
import { issue } from '../../lib/validation.js';

/**
 * A callback URL as Tern accepts it: absolute https, or http when WEBHOOK_ALLOW_INSECURE is
 * set. Whether its host may be called is decided at each delivery, on the resolved address.
 */
export function webhookUrl(allowInsecure: boolean) {
  return z
    .string()
    .max(2048)
    .refine((value) => {
      try {
        const url = new URL(value);
        return (
          (url.protocol === 'https:' || (allowInsecure && url.protocol === 'http:')) &&
          url.hostname !== '' &&
          !url.username &&
          !url.password
        );
      } catch {
        return false;
      }
    }, issue('invalid_format'))
    .meta({
      format: 'uri',
      pattern: allowInsecure ? '^https?://[^/@]+' : '^https://[^/@]+',
      examples: ['https://example.com/tern-webhook'],
    });
}
