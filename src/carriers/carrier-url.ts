import { AppError } from '../errors.js';

/** What a carrier's URL says, its password apart. */
export type CarrierEndpoint =
  | { kind: 'simulator'; options: URLSearchParams }
  | {
      kind: 'smpp';
      host: string;
      port: number;
      tls: boolean;
      systemId: string;
      options: URLSearchParams;
    };

export const CARRIER_NAME = /^[a-z0-9-]{1,40}$/;

function invalidUrl(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (smpp://system_id:password@host:port[?options], smpps:// for TLS, or simulator://)`,
  );
}

/** The URL split into what may be shown (no password) and the password, which is sealed apart. */
export function splitCarrierUrl(text: string): { url: string; password: string | null } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl('not a URL');
  }
  const password = url.password ? decodeURIComponent(url.password) : null;
  url.password = '';
  endpointOf(url.toString());
  if (password && password.length > 8)
    throw invalidUrl('a password longer than the 8 characters SMPP 3.4 allows');
  return { url: url.toString(), password };
}

/** The endpoint of a stored URL (one without its password). */
export function endpointOf(text: string): CarrierEndpoint {
  const url = new URL(text);
  if (url.protocol === 'simulator:') return { kind: 'simulator', options: url.searchParams };
  if (url.protocol !== 'smpp:' && url.protocol !== 'smpps:') throw invalidUrl(`the scheme ${url.protocol}`);
  if (!url.hostname) throw invalidUrl('no host');
  const systemId = decodeURIComponent(url.username);
  if (!systemId || systemId.length > 15) throw invalidUrl('a system_id of 1..15 characters is needed');
  const tls = url.protocol === 'smpps:';
  return {
    kind: 'smpp',
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : tls ? 3550 : 2775,
    tls,
    systemId,
    options: url.searchParams,
  };
}

/** A whole number option of a carrier URL, or `fallback` when absent. */
export function numberOption(options: URLSearchParams, name: string, fallback: number): number {
  const value = options.get(name);
  if (value === null) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw invalidUrl(`the option ${name} must be a whole number`);
  return parsed;
}
