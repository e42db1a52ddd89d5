import { getCountries, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';
import { parsePhoneNumberFromString as parseWithFullMetadata } from 'libphonenumber-js/max';
import numberingPlans from 'libphonenumber-js/metadata.min.json';
import { z } from 'zod';
import { issue } from './validation.js';

/** E.164 as a client may write it: 7 to 15 digits, the first not 0, with or without a leading `+`. */
export const E164_WRITTEN = /^\+?[1-9][0-9]{6,14}$/;

/** The same as people may write it (what `normalizedPhone` takes): E.164 with spaces, dashes, dots and parentheses anywhere. */
export const PHONE_WRITTEN = /^[\s\-.()]*\+?[\s\-.()]*[1-9](?:[\s\-.()]*[0-9]){6,14}[\s\-.()]*$/;

export const E164_EXPECTED = '7–15 digits, optional leading +';

/** A number in E.164, with or without `+`; it comes out as digits, which is how it is stored and shown. */
export const e164 = z
  .string()
  .refine((value) => E164_WRITTEN.test(value), issue('invalid_e164', E164_EXPECTED))
  .transform((value) => value.replace(/^\+/, ''))
  .meta({
    pattern: E164_WRITTEN.source,
    description: `E.164: ${E164_EXPECTED}`,
    examples: ['+5511987654321'],
  });

/**
 * A phone as people write it, made E.164 digits: spaces, dashes, dots, parentheses and a
 * leading `+` are dropped, then the E.164 rule applies.
 */
export const normalizedPhone = z
  .string()
  .transform((value) => value.trim().replace(/[\s\-.()]/g, ''))
  .pipe(e164)
  .meta({ pattern: PHONE_WRITTEN.source });

/**
 * The ISO 3166 country a number (E.164 digits) belongs to: the one its numbering plan names when
 * the number falls in a range of one country of a shared calling code (+44 7911… is Guernsey),
 * else the main country of its calling code (+44 → GB, +1 → US); null for a calling code that
 * does not exist.
 */
export function countryOf(digits: string): string | null {
  return numberFacts(digits).country;
}

/** What one parse of a number (E.164 digits) tells: whether its length can exist, and its country. */
export interface NumberFacts {
  /** False for a length the numbering plan of its calling code cannot have (or an unknown calling code). */
  possible: boolean;
  country: string | null;
}

export function numberFacts(digits: string): NumberFacts {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed) return { possible: false, country: null };
  return {
    possible: parsed.isPossible(),
    country: parsed.country ?? numberingPlans.country_calling_codes[parsed.countryCallingCode]?.[0] ?? null,
  };
}

/**
 * The country whose numbering plan claims the number (E.164 digits), read with libphonenumber's
 * full metadata (each country's ranges of valid numbers); null when no country's plan has it.
 * Unlike countryOf, a number of a shared calling code in no country's range (+1 000…, +1 911…,
 * +7 300…) is nobody's, not the calling code's main country's. A parse of some 10–20 µs,
 * against the millisecond a send costs.
 */
export function claimingCountry(digits: string): string | null {
  const parsed = parseWithFullMetadata(`+${digits}`);
  return parsed?.country !== undefined && parsed.isValid() ? parsed.country : null;
}

/** How many countries libphonenumber-js has a numbering plan for: every country countryOf can answer. */
export const KNOWN_COUNTRY_COUNT = getCountries().length;

/** An ISO 3166 alpha-2 code of a country libphonenumber-js has a numbering plan for (GB, IE, US). */
export function isKnownCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}
