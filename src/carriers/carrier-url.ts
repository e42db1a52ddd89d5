import { AppError } from '../errors.js';
import { httpProviderKind } from './http/providers.js';

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
    }
  | {
      kind: 'http';
      /** The URL scheme, which names the provider (twilio, vonage, …; http and https for a template). */
      provider: string;
      /** Where its API is: `https://host[:port]`, or `http://` with the option `tls=false`. */
      baseUrl: string;
      url: URL;
      options: URLSearchParams;
    };

export const CARRIER_NAME = /^[a-z0-9-]{1,40}$/;

function invalidUrl(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (smpp://system_id:password@host:port[?options], smpps:// for TLS, simulator://, twilio://, vonage://, infobip://, android://, or http(s):// with --template; see docs/carriers.md)`,
  );
}

/** A carrier URL's secrets, sealed apart from it at rest and never shown. */
export interface CarrierSecrets {
  /** The password, or for a provider whose secret is an API key in the user part (infobip://API_KEY@…), the user. */
  password: string | null;
  /** The query options its provider kind declares secret (Vonage's signature_secret), by name. */
  secretOptions: Record<string, string>;
}

/** The URL split into what may be shown and its secrets, which are sealed apart. */
export function splitCarrierUrl(text: string): CarrierSecrets & { url: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidUrl('not a URL');
  }
  const secretIn = httpProviderKind(url.protocol.slice(0, -1))?.secretIn ?? 'password';
  const secret = secretIn === 'username' ? url.username : url.password;
  const password = secret ? decodeURIComponent(secret) : null;
  url.password = '';
  if (secretIn === 'username') url.username = '';
  const secretOptions = takeSecretOptions(url);
  const endpoint = endpointOf(url.toString());
  if (endpoint.kind === 'smpp' && password && password.length > 8)
    throw invalidUrl('a password longer than the 8 characters SMPP 3.4 allows');
  const secrets = [password ?? '', ...Object.values(secretOptions)];
  if (secrets.some((value) => value.length > 512)) throw invalidUrl('a secret longer than 512 characters');
  return { url: url.toString(), password, secretOptions };
}

/**
 * Takes the query options that the URL's provider kind declares secret out of `url`, in place,
 * leaving the others as written; them by name, percent-decoded with a `+` kept a plus, as every
 * option of a carrier URL reads.
 */
export function takeSecretOptions(url: URL): Record<string, string> {
  const names = httpProviderKind(url.protocol.slice(0, -1))?.secretOptions ?? [];
  const taken: Record<string, string> = {};
  if (names.length === 0) return taken;
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((pair) => {
      const at = pair.indexOf('=');
      const name = decodeOption(at < 0 ? pair : pair.slice(0, at));
      if (!names.includes(name)) return pair !== '';
      taken[name] = decodeOption(at < 0 ? '' : pair.slice(at + 1));
      return false;
    });
  url.search = kept.join('&');
  return taken;
}

function decodeOption(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalidUrl('a query option that does not percent-decode');
  }
}

/** The endpoint of a stored URL (one without its password). */
export function endpointOf(text: string): CarrierEndpoint {
  const url = new URL(text);
  if (url.protocol === 'simulator:') return { kind: 'simulator', options: url.searchParams };
  const provider = url.protocol.slice(0, -1);
  if (httpProviderKind(provider)) return httpEndpoint(provider, url);
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

function httpEndpoint(provider: string, url: URL): CarrierEndpoint {
  if (!url.hostname) throw invalidUrl('no host');
  const tlsOption = url.searchParams.get('tls');
  if (tlsOption !== null && tlsOption !== 'true' && tlsOption !== 'false')
    throw invalidUrl('the option tls must be true or false');
  const template = provider === 'http' || provider === 'https';
  if (template && url.pathname !== '/' && url.pathname !== '')
    throw invalidUrl("a path: the template's url gives the path");
  const tls = template ? provider === 'https' : tlsOption !== 'false';
  return {
    kind: 'http',
    provider,
    baseUrl: `${tls ? 'https' : 'http'}://${url.host}`,
    url,
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
