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
