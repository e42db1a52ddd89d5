import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { endpointOf, numberOption } from '../carrier-url.js';
import { HttpCarrier } from './http-carrier.js';
import type { HttpProvider } from './http-provider.js';
import { type HttpProviderKind, httpProviderKind } from './providers.js';

/** What an HTTP carrier is made of, from its record. */
export interface HttpCarrierRecord {
  name: string;
  /** As stored: without its secrets. */
  url: string;
  password: string | null;
  secretOptions: Record<string, string>;
  callbackSecret: string | null;
  template: string | null;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;
// A report that overtook the send's answer is looked at again this often.
const STORED_EVENTS_POLL_MS = 500;

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

/** The provider of an HTTP carrier's record, with its kind; null for the other kinds. */
export function providerOf(
  record: HttpCarrierRecord,
): { provider: HttpProvider; kind: HttpProviderKind } | null {
  const endpoint = endpointOf(record.url);
  if (endpoint.kind !== 'http') return null;
  const kind = httpProviderKind(endpoint.provider)!;
  const provider = kind.create(
    {
      carrier: record.name,
      url: endpoint.url,
      baseUrl: endpoint.baseUrl,
      secret: record.password ?? '',
      secretOptions: record.secretOptions,
      callbackSecret: record.callbackSecret ?? '',
    },
    record.template,
  );
  return { provider, kind };
}

/**
 * Checks an HTTP carrier as `carriers add` and `update` are given it: its URL and template read,
 * and PUBLIC_URL set when its provider calls Tern back. False for the other kinds.
 */
export function checkHttpCarrier(input: {
  name: string;
  url: string;
  secret: string | null;
  secretOptions: Record<string, string>;
  template: string | null;
  publicUrl: string | null;
}): boolean {
  const endpoint = endpointOf(input.url);
  const kind = endpoint.kind === 'http' ? httpProviderKind(endpoint.provider)! : null;
  if (input.template !== null && !kind?.template)
    throw invalid('invalid --template: only an http:// or https:// carrier takes a template');
  if (!kind) return false;
  if (kind.template && input.template === null)
    throw invalid('--template FILE is required for an http:// or https:// carrier (docs/carriers.md)');
  providerOf({ ...input, password: input.secret, callbackSecret: 'check' });
  if (kind.callsBack && !input.publicUrl)
    throw invalid(
      `PUBLIC_URL is not set: a ${endpoint.kind === 'http' ? endpoint.provider : ''} carrier sends its delivery reports and replies to PUBLIC_URL/carriers/${input.name}/events, so set PUBLIC_URL to the address the provider reaches Tern at`,
    );
  return true;
}

/** The kind `carriers list` shows: smpp, simulator, or the HTTP provider's scheme. */
export function carrierKind(url: string): string {
  const endpoint = endpointOf(url);
  return endpoint.kind === 'http' ? endpoint.provider : endpoint.kind;
}

/** PUBLIC_URL and the carrier's callback path; null for a carrier that is not an HTTP one, or without PUBLIC_URL. */
export function callbackUrlOf(
  record: { name: string; url: string; callbackSecret: string | null },
  publicUrl: string | null,
): string | null {
  const endpoint = endpointOf(record.url);
  if (endpoint.kind !== 'http' || !publicUrl) return null;
  return `${publicUrl}${callbackPath(record.name, httpProviderKind(endpoint.provider)!, record.callbackSecret)}`;
}

/** Whether the carrier's provider calls Tern back (and so needs PUBLIC_URL). */
export function carrierCallsBack(url: string): boolean {
  const endpoint = endpointOf(url);
  return endpoint.kind === 'http' && httpProviderKind(endpoint.provider)!.callsBack;
}

export function newCallbackSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** The path a carrier's provider calls back: /carriers/{name}/events, and its secret after for those that sign nothing. */
export function callbackPath(name: string, kind: HttpProviderKind, callbackSecret: string | null): string {
  const path = `/carriers/${name}/events`;
  return kind.secretInPath && callbackSecret ? `${path}/${callbackSecret}` : path;
}

export function createHttpCarrier(
  record: HttpCarrierRecord,
  deps: {
    prisma: PrismaClient;
    clock: Clock;
    logger: Logger;
    publicUrl: string | null;
    claimLeaseMs: number;
  },
): HttpCarrier | null {
  const made = providerOf(record);
  if (!made) return null;
  const endpoint = endpointOf(record.url);
  // An answer must come well within the claim's lease, or a second worker could take the message.
  const timeoutMs = Math.min(
    numberOption(endpoint.options, 'timeout_ms', DEFAULT_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS,
    Math.floor(deps.claimLeaseMs / 2),
  );
  return new HttpCarrier(deps.prisma, deps.clock, deps.logger, {
    name: record.name,
    provider: made.provider,
    callbackUrl: callbackUrlOf(record, deps.publicUrl),
    answerTimeoutMs: timeoutMs,
    connectTimeoutMs: timeoutMs,
    maxAnswerBytes: MAX_ANSWER_BYTES,
    pollMs: STORED_EVENTS_POLL_MS,
  });
}
