import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { DeliveryReport, OutboundSms } from '../carrier.js';
import {
  headerOf,
  parseJsonObject,
  plusNumber,
  queryOption,
  remainingValidity,
  safeCode,
  statusAnswer,
  withoutPlus,
} from './http-answers.js';
import type {
  HttpProvider,
  ProviderAnswer,
  ProviderCallback,
  ProviderEvent,
  ProviderResponse,
  ProviderSettings,
  SendContext,
} from './http-provider.js';

// Twilio's Messages resource (2010-04-01 API): POST …/Accounts/{AccountSid}/Messages.json,
// form-encoded, HTTP Basic with the account SID and auth token. Status callbacks and incoming
// messages are form-encoded POSTs signed in X-Twilio-Signature.

const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;
const SERVICE_SID = /^MG[0-9a-fA-F]{32}$/;
const SENDER = /^(\+?[1-9][0-9]{2,14}|[A-Za-z0-9 ]{1,11})$/;
/** Twilio keeps a message queued at most this long (its ValidityPeriod bound). */
const VALIDITY_SECONDS = { min: 1, max: 36_000 };
/** Our message id rides in the status callback's query: each report then names its message. */
const REFERENCE_PARAMETER = 'ref';

const FINAL_STATUSES: Record<string, 'delivered' | 'failed'> = {
  delivered: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
};

function invalid(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (twilio://ACCOUNT_SID:AUTH_TOKEN@api.twilio.com?from=+15550001111 or ?messaging_service=MG…)`,
  );
}

/**
 * X-Twilio-Signature: base64 of HMAC-SHA1, keyed by the auth token, over the full URL Twilio
 * called followed by each POST parameter's name and value, sorted by name.
 */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const names = [...new Set(params.keys())].sort();
  let data = url;
  for (const name of names)
    for (const value of [...new Set(params.getAll(name))].sort()) data += `${name}${value}`;
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** The URL as Twilio may have signed it: with and without the scheme's default port. */
function urlForms(text: string): string[] {
  const url = new URL(text);
  const port = url.protocol === 'https:' ? '443' : '80';
  if (url.port) return [text, text.replace(`${url.host}`, url.hostname)];
  return [text, text.replace(url.host, `${url.host}:${port}`)];
}

export function createTwilioProvider(settings: ProviderSettings): HttpProvider {
  const accountSid = decodeURIComponent(settings.url.username);
  if (!ACCOUNT_SID.test(accountSid)) throw invalid('the user must be an account SID (AC and 32 hex digits)');
  const from = queryOption(settings.url, 'from');
  const service = queryOption(settings.url, 'messaging_service');
  if ((from === null) === (service === null))
    throw invalid('give exactly one of from= or messaging_service=');
  if (service !== null && !SERVICE_SID.test(service))
    throw invalid('messaging_service must be a Messaging Service SID (MG and 32 hex digits)');
  if (from !== null && !SENDER.test(from)) throw invalid('from must be a number or an alphanumeric sender');
  const authorization = `Basic ${Buffer.from(`${accountSid}:${settings.secret}`).toString('base64')}`;
  const endpoint = `${settings.baseUrl}/2010-04-01/Accounts/${accountSid}/Messages.json`;

  return {
    kind: 'twilio',
    // Twilio has no client reference it refuses a second message by.
    deduplicatesByReference: false,
    request(sms: OutboundSms, context: SendContext) {
      const form = new URLSearchParams({ To: plusNumber(sms.to), Body: sms.text });
      if (service !== null) form.set('MessagingServiceSid', service);
      else form.set('From', sms.from ? plusNumber(sms.from) : plusNumber(from!));
      if (context.callbackUrl) {
        const callback = new URL(context.callbackUrl);
        callback.searchParams.set(REFERENCE_PARAMETER, sms.reference);
        form.set('StatusCallback', callback.toString());
      }
      if (sms.validUntil)
        form.set(
          'ValidityPeriod',
          String(remainingValidity(sms.validUntil, context.now, 1_000, VALIDITY_SECONDS)),
        );
      return {
        method: 'POST',
        url: endpoint,
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
      };
    },
    answer: readAnswer,
    verify(call: ProviderCallback) {
      const signature = headerOf(call.headers, 'x-twilio-signature');
      if (!signature || call.method !== 'POST') return false;
      const params = new URLSearchParams(call.rawBody.toString('utf8'));
      const given = Buffer.from(signature);
      return urlForms(call.url).some((url) => {
        const expected = Buffer.from(twilioSignature(settings.secret, url, params));
        return expected.length === given.length && timingSafeEqual(expected, given);
      });
    },
    events: readCallback,
  };
}

/** 201 with the message's `sid`; an error is JSON {code, message, status}. */
function readAnswer(response: ProviderResponse): ProviderAnswer {
  const body = parseJsonObject(response.body);
  if (response.status >= 200 && response.status < 300) {
    const sid = body?.sid;
    if (typeof sid === 'string' && sid) return { outcome: 'accepted', providerMessageId: sid };
    return { outcome: 'temporary', message: `HTTP ${response.status} without a message sid` };
  }
  const code = typeof body?.code === 'number' || typeof body?.code === 'string' ? String(body.code) : null;
  const message = typeof body?.message === 'string' ? body.message : response.body.slice(0, 200);
  return statusAnswer(response.status, code, message);
}

function readCallback(call: ProviderCallback, at: Date): ProviderEvent[] {
  const params = new URLSearchParams(call.rawBody.toString('utf8'));
  const sid = params.get('MessageSid') ?? params.get('SmsSid');
  if (!sid) return [];
  const status = params.get('MessageStatus') ?? params.get('SmsStatus');
  const final = status ? FINAL_STATUSES[status] : undefined;
  if (final) return [{ kind: 'report', report: statusReport(call, params, sid, final, at) }];
  const from = params.get('From');
  if ((status !== 'received' && status !== null) || !from || !params.has('Body')) return [];
  const to = params.get('To');
  return [
    {
      kind: 'reply',
      reply: {
        carrierMessageId: sid,
        from: withoutPlus(from),
        to: to ? withoutPlus(to) : null,
        text: params.get('Body') ?? '',
        at,
      },
    },
  ];
}

/** A final status callback; the reference is the one Tern put in the StatusCallback URL. */
function statusReport(
  call: ProviderCallback,
  params: URLSearchParams,
  sid: string,
  status: 'delivered' | 'failed',
  at: Date,
): DeliveryReport {
  const reference = new URL(call.url).searchParams.get(REFERENCE_PARAMETER);
  const report: DeliveryReport = { carrierMessageId: sid, status, at, ...(reference ? { reference } : {}) };
  if (status === 'delivered') return report;
  const twilioStatus = params.get('MessageStatus') ?? params.get('SmsStatus') ?? 'failed';
  const error = {
    code: `carrier_${safeCode(params.get('ErrorCode') || twilioStatus)}`,
    message: params.get('ErrorMessage') || `Twilio reported the message ${twilioStatus}`,
  };
  return { ...report, error };
}
