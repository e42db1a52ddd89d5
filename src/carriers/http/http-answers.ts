import type { ProviderAnswer } from './http-provider.js';

// Helpers every HTTP provider shares to read answers and callbacks the same way.

/** What a non-2xx status means by Tern's rules: 408, 429 and 5xx are temporary, any other 4xx is for good. */
export function statusAnswer(status: number, code: string | null, message: string): ProviderAnswer {
  const text = message || `HTTP ${status}`;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429)
    return { outcome: 'rejected', code: safeCode(code ?? String(status)), message: text };
  return { outcome: 'temporary', message: `HTTP ${status}: ${text}` };
}

/** A provider's error code as part of `carrier_<code>`: letters, digits, `_` and `-`, at most 40. */
export function safeCode(code: string): string {
  return code.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'error';
}

/** The body as a JSON object, or null when it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A header's value (the first, when repeated). */
export function headerOf(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | null {
  const value = headers[name.toLowerCase()];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** A number as E.164 with its '+' (Tern keeps them without); a sender with a letter stays as it is. */
export function plusNumber(number: string): string {
  return /^[0-9]+$/.test(number) ? `+${number}` : number;
}

/** A number as Tern keeps them: without the leading '+'. */
export function withoutPlus(number: string): string {
  return number.trim().replace(/^\+/, '');
}

/**
 * A query option as written, percent-decoded but with `+` kept: `?from=+15550001111` is the
 * number with its plus, where form decoding would make it a space.
 */
export function queryOption(url: URL, name: string): string | null {
  for (const pair of url.search.slice(1).split('&')) {
    const [key = '', value = ''] = pair.split('=', 2);
    if (safeDecode(key) === name) return safeDecode(value);
  }
  return null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * What is left of a message's validity in whole units of `unitMs`, rounded down so that the
 * provider never keeps trying it after Tern's validity ends, within the provider's own range.
 */
export function remainingValidity(
  validUntil: Date,
  now: Date,
  unitMs: number,
  range: { min: number; max: number },
): number {
  const left = Math.floor((validUntil.getTime() - now.getTime()) / unitMs);
  return Math.min(range.max, Math.max(range.min, left));
}
