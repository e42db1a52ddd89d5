import { isKnownCountry } from '../lib/phone.js';

/**
 * The most any window of the fraud guard may count. Each counted message is an entry of a Redis
 * sorted set until it leaves its window, so this bounds the memory of one account's window.
 */
export const MAX_GUARD_LIMIT = 100_000;
/** The longest cool-off of a blocked country: a week. */
export const MAX_COOL_OFF_SECONDS = 7 * 24 * 60 * 60;

export type GuardMode = 'block' | 'monitor';

/** A country's caps; null for no cap in that window. */
export interface CountryCap {
  hourly: number | null;
  daily: number | null;
}

/** What the guard applies to an account that sets nothing of its own (FRAUD_* settings). */
export interface FraudGuardDefaults {
  /** Identical texts to one number per rolling hour; 0 for no limit. */
  floodIdentical: number;
  /** Any texts to one number per rolling hour; 0 for no limit. */
  floodAny: number;
  /** Messages to one number range (the number less its last 4 digits) per rolling hour; 0 for no limit. */
  velocity: number;
  countryCaps: Record<string, CountryCap>;
  coolOffSeconds: number;
  mode: GuardMode;
  /** What a send meets while Redis cannot count: let through (`allow`) or 503 (`refuse`). */
  whenRedisDown: 'allow' | 'refuse';
}

function capOf(text: string): number | null {
  if (text === '' || text === '-') return null;
  if (!/^[0-9]{1,6}$/.test(text)) throw new Error(`"${text}" is not a whole number`);
  const value = Number(text);
  if (value > MAX_GUARD_LIMIT) throw new Error(`${value} is over ${MAX_GUARD_LIMIT}`);
  return value;
}

/**
 * `CC=H/D`: the country's hourly and daily caps (`GB=100/1000`; `GB=100/` or `GB=/1000` for one
 * of them). Throws a message for people on anything else.
 */
export function parseCountryCap(text: string): [string, CountryCap] {
  const match = /^([A-Za-z]{2})=([0-9]*|-)\/([0-9]*|-)$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not CC=HOURLY/DAILY (e.g. GB=100/1000)`);
  const country = match[1]!.toUpperCase();
  if (!isKnownCountry(country)) throw new Error(`"${country}" is not an ISO 3166 alpha-2 country code`);
  return [country, { hourly: capOf(match[2]!), daily: capOf(match[3]!) }];
}

/** FRAUD_COUNTRY_CAPS: `CC=H/D` entries separated by commas; empty for none. */
export function parseCountryCaps(text: string): Record<string, CountryCap> {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length > 300) throw new Error('more than 300 countries');
  return Object.fromEntries(entries.map(parseCountryCap));
}
