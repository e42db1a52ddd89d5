import { z } from 'zod';
import { issue } from './validation.js';

// The names PostgreSQL's time zone database holds, lower case, once a process has read them
// (src/db/time-zones.ts, at start). Until then only the runtime is asked.
let databaseZones: ReadonlySet<string> | null = null;

/**
 * Keeps the zone names PostgreSQL knows (pg_timezone_names): from then on a zone is valid only
 * when both the runtime and PostgreSQL know it, since a zone PostgreSQL refuses fails every
 * statement that reads it. Names are compared without case, as both compare them.
 */
export function knowDatabaseTimeZones(names: Iterable<string>): void {
  databaseZones = new Set([...names].map((name) => name.toLowerCase()));
}

/** The names given to knowDatabaseTimeZones, for a thread to be given them too; null before. */
export function databaseTimeZones(): string[] | null {
  return databaseZones ? [...databaseZones] : null;
}

/** A name the runtime's time zone database knows (America/New_York, UTC), and PostgreSQL's once read. */
export function isIanaTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  if (databaseZones && !databaseZones.has(name.toLowerCase())) return false;
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
