import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { OutboundSms } from '../carrier.js';
import { parseJsonObject, remainingValidity, safeCode, statusAnswer, withoutPlus } from './http-answers.js';
import type {
  HttpProvider,
  ProviderAnswer,
  ProviderCallback,
  ProviderEvent,
  ProviderResponse,
  ProviderSettings,
  SendContext,
} from './http-provider.js';

// Vonage's SMS API: POST {base}/sms/json, form-encoded, with api_key and api_secret in the body.
// It answers 200 with one entry per part in `messages`, each with its own `status` ("0" is taken).
// Delivery receipts and inbound messages come as GET query parameters or a POST (JSON or form),
// signed when the account has signed webhooks: `sig` over the other parameters (see vonageSignature).

const SIGNATURE_METHODS = ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const;
type SignatureMethod = (typeof SIGNATURE_METHODS)[number];
const SENDER = /^(\+?[0-9]{3,15}|[A-Za-z0-9 ]{1,11})$/;
/** A signed callback older or newer than this (its `timestamp`) is refused as a replay. */
const SIGNATURE_WINDOW_SECONDS = 300;
/** Vonage's bounds on `ttl`, in milliseconds. */
const TTL_MS = { min: 20_000, max: 604_800_000 };

/**
 * Send statuses that say "not now" rather than "never": throttled (1), an internal error (5), no
 * credit left (9, "top up and retry") and too many connections (10, "back off and retry"). The
 * next carrier of the route can take the message meanwhile; every other status is about the
 * message or the account's set-up and fails it.
 */
const TEMPORARY_STATUSES = new Set(['1', '5', '9', '10']);

/** The `err-code` of a failed delivery receipt, as Vonage's delivery receipt reference names them. */
const RECEIPT_ERRORS: Record<string, string> = {
  '1': 'Unknown',
  '2': 'Absent subscriber (temporary)',
  '3': 'Absent subscriber (permanent)',
  '4': 'Call barred by user',
  '5': 'Portability error',
  '6': 'Anti-spam rejection',
  '7': 'Handset busy',
  '8': 'Network error',
  '9': 'Illegal number',
  '10': 'Invalid message',
  '11': 'Unroutable',
  '12': 'Destination unreachable',
  '13': 'Subscriber age restriction',
  '14': 'Number blocked by carrier',
  '15': 'Pre-paid: insufficient funds',
  '99': 'General error',
};
const FAILED_RECEIPTS = new Set(['failed', 'rejected', 'expired']);

function invalid(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (vonage://API_KEY:API_SECRET@rest.nexmo.com?from=ACME&signature_secret=…[&signature_method=md5hash|md5|sha1|sha256|sha512])`,
  );
}

/**
 * Vonage's signature of a callback or request: each parameter but `sig`, sorted by name, as
 * `&name=value` with `&` and `=` in values made `_`; then MD5 of that string followed by the
 * signature secret (`md5hash`, the default), or an HMAC of it keyed by the secret. Hex digits.
 */
export function vonageSignature(
  params: Record<string, string>,
  secret: string,
  method: SignatureMethod,
): string {
  const signed = Object.keys(params)
    .filter((name) => name !== 'sig')
    .sort()
    .map((name) => `&${name}=${params[name]!.replace(/[&=]/g, '_')}`)
    .join('');
  if (method === 'md5hash')
    return createHash('md5')
      .update(signed + secret, 'utf8')
      .digest('hex');
  return createHmac(method, secret).update(signed, 'utf8').digest('hex');
}

/** A callback's parameters: the query's, and the body's (JSON or form), as strings. */
export function callbackParams(call: ProviderCallback): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of new URL(call.url).searchParams) params[name] = value;
  const body = call.rawBody.toString('utf8');
  if (!body) return params;
  const json = parseJsonObject(body);
  if (json) {
    for (const [name, value] of Object.entries(json))
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        params[name] = String(value);
    return params;
  }
  for (const [name, value] of new URLSearchParams(body)) params[name] = value;
  return params;
}

function signatureMethod(settings: ProviderSettings): SignatureMethod {
  const method = settings.url.searchParams.get('signature_method') ?? 'md5hash';
  if (!(SIGNATURE_METHODS as readonly string[]).includes(method))
    throw invalid('signature_method must be md5hash, md5, sha1, sha256 or sha512');
  return method as SignatureMethod;
}

export function createVonageProvider(settings: ProviderSettings): HttpProvider {
  const apiKey = decodeURIComponent(settings.url.username);
  if (!apiKey) throw invalid('the user must be the API key');
  if (!settings.secret) throw invalid('the password must be the API secret');
  const from = settings.url.searchParams.get('from');
  if (from !== null && !SENDER.test(from)) throw invalid('from must be a number or an alphanumeric sender');
  // Unsigned webhooks could come from anyone: Tern takes Vonage's callbacks signed only.
  const signatureSecret = settings.secretOptions.signature_secret;
  if (!signatureSecret) throw invalid('signature_secret is required (the dashboard’s signature secret)');
  const method = signatureMethod(settings);
  const endpoint = `${settings.baseUrl}/sms/json`;

  return {
    kind: 'vonage',
    // client-ref is echoed back, not used to refuse a second message.
    deduplicatesByReference: false,
    request(sms: OutboundSms, context: SendContext) {
      const form = new URLSearchParams({
        api_key: apiKey,
        api_secret: settings.secret,
        to: withoutPlus(sms.to),
      });
      const sender = sms.from ?? from;
      if (sender) form.set('from', /^\+?[0-9]+$/.test(sender) ? withoutPlus(sender) : sender);
      form.set('text', sms.text);
      if (sms.encoding === 'UCS-2') form.set('type', 'unicode');
      form.set('client-ref', sms.reference);
      if (context.callbackUrl) form.set('callback', context.callbackUrl);
      if (sms.validUntil) form.set('ttl', String(remainingValidity(sms.validUntil, context.now, 1, TTL_MS)));
      return {
        method: 'POST',
        url: endpoint,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
      };
    },
    answer: readAnswer,
    verify(call: ProviderCallback, now: Date) {
      const params = callbackParams(call);
      const { sig, timestamp } = params;
      if (!sig || !timestamp || !/^[0-9]{1,12}$/.test(timestamp)) return false;
      if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return false;
      const expected = Buffer.from(vonageSignature(params, signatureSecret, method).toLowerCase());
      const given = Buffer.from(sig.toLowerCase());
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
    events: readCallback,
  };
}

interface SentPart {
  status: string;
  messageId: string | null;
  errorText: string;
}

function sentParts(body: Record<string, unknown> | null): SentPart[] {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages.map((entry: unknown) => {
    const part = (entry ?? {}) as Record<string, unknown>;
    return {
      status: String(part.status ?? ''),
      messageId: typeof part['message-id'] === 'string' ? part['message-id'] : null,
      errorText: typeof part['error-text'] === 'string' ? part['error-text'] : '',
    };
  });
}

/**
 * 200 with a status per part. All "0": taken, under the first part's id (every part's receipt
 * carries our client-ref). None taken: the first refusal decides. Some taken: the message went
 * out incomplete, and sending it again would repeat the parts already taken, so it fails.
 */
function readAnswer(response: ProviderResponse): ProviderAnswer {
  const body = parseJsonObject(response.body);
  if (response.status < 200 || response.status >= 300)
    return statusAnswer(response.status, null, response.body.slice(0, 200));
  const parts = sentParts(body);
  const refused = parts.find((part) => part.status !== '0');
  if (parts.length === 0)
    return { outcome: 'temporary', message: `HTTP ${response.status} without messages` };
  if (!refused) {
    const id = parts[0]!.messageId;
    if (id) return { outcome: 'accepted', providerMessageId: id };
    return { outcome: 'temporary', message: `HTTP ${response.status} without a message-id` };
  }
  const text = refused.errorText || `Vonage status ${refused.status}`;
  const taken = parts.filter((part) => part.status === '0').length;
  if (taken > 0)
    return {
      outcome: 'rejected',
      code: safeCode(refused.status),
      message: `${taken} of ${parts.length} parts taken, then: ${text}`,
    };
  if (TEMPORARY_STATUSES.has(refused.status))
    return { outcome: 'temporary', message: `Vonage status ${refused.status}: ${text}` };
  return { outcome: 'rejected', code: safeCode(refused.status), message: text };
}

/** "2020-01-01 12:00:00" (UTC), or the unix `timestamp`; null when neither reads. */
function callbackTime(params: Record<string, string>): Date | null {
  const stamp = params['message-timestamp'];
  if (stamp && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(stamp)) {
    const at = new Date(`${stamp.replace(' ', 'T')}Z`);
    if (!Number.isNaN(at.getTime())) return at;
  }
  if (params.timestamp && /^[0-9]{1,12}$/.test(params.timestamp))
    return new Date(Number(params.timestamp) * 1000);
  return null;
}

/** A delivery receipt: delivered, failed (failed, rejected, expired), or nothing yet. */
function readReceipt(params: Record<string, string>, messageId: string, at: Date): ProviderEvent[] {
  const status = params.status!;
  const reference = params['client-ref'] ? { reference: params['client-ref'] } : {};
  const report = { carrierMessageId: messageId, at, ...reference };
  if (status === 'delivered') return [{ kind: 'report', report: { ...report, status: 'delivered' } }];
  // accepted, buffered and unknown are on the way: a final receipt follows.
  if (!FAILED_RECEIPTS.has(status)) return [];
  const errorCode = params['err-code'] && params['err-code'] !== '0' ? params['err-code'] : status;
  const error = {
    code: `carrier_${safeCode(errorCode)}`,
    message: RECEIPT_ERRORS[errorCode] ?? `Vonage reported the message ${status}`,
  };
  return [{ kind: 'report', report: { ...report, status: 'failed', error } }];
}

function readCallback(call: ProviderCallback, now: Date): ProviderEvent[] {
  const params = callbackParams(call);
  const messageId = params.messageId;
  if (!messageId) return [];
  const at = callbackTime(params) ?? now;
  if (params.status !== undefined) return readReceipt(params, messageId, at);
  // An inbound message; a binary one (type=binary) carries no text to keep.
  if (!params.msisdn || params.text === undefined || params.type === 'binary') return [];
  return [
    {
      kind: 'reply',
      reply: {
        carrierMessageId: messageId,
        from: withoutPlus(params.msisdn),
        to: params.to ? withoutPlus(params.to) : null,
        text: params.text,
        at,
      },
    },
  ];
}
