import { z } from 'zod';
import { issue } from './validation.js';

/** A name the runtime's time zone database knows (America/New_York, UTC), as Intl reads it. */
export function isIanaTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const timeZoneInput = z
  .string()
  .max(64)
  .refine(isIanaTimeZone, issue('invalid_value', 'an IANA time zone name, e.g. America/New_York'))
  .meta({ description: 'An IANA time zone name', examples: ['America/Sao_Paulo', 'UTC'] });
