import { createHash, timingSafeEqual } from 'node:crypto';
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

// Infobip's SMS API: POST {base}/sms/2/text/advanced, JSON, `Authorization: App <API key>`. The
// answer gives each destination's messageId and a status object {groupName, id, name,
// description}; an error is {requestError: {serviceException: {messageId, text}}}. Delivery
// reports (to the notifyUrl of each message) and inbound messages (to the URL set on the number
// in Infobip's portal) are JSON {results: [...]} and signed by nothing: their URL ends in the
// carrier's callback secret.

const SENDER = /^(\+?[0-9]{3,15}|[A-Za-z0-9 ]{1,11})$/;
/** Infobip keeps a message at most 48 hours; a longer validityPeriod is cut to this. */
const VALIDITY_MINUTES = { min: 1, max: 2880 };
/**
 * A REJECTED status that is the account's trouble, not the message's: another carrier can send
 * it meanwhile. Every other rejection fails the message.
 */
const ACCOUNT_REJECTIONS = new Set(['REJECTED_NOT_ENOUGH_CREDITS']);
const FAILED_GROUPS = new Set(['UNDELIVERABLE', 'EXPIRED', 'REJECTED']);

function invalid(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --url: ${why} (infobip://API_KEY@BASE.api.infobip.com?from=ACME)`,
  );
}

interface InfobipStatus {
  groupName: string;
  name: string;
  description: string;
}

function statusOf(value: unknown): InfobipStatus | null {
  if (value === null || typeof value !== 'object') return null;
  const status = value as Record<string, unknown>;
  const text = (field: string) => (typeof status[field] === 'string' ? (status[field] as string) : '');
  return { groupName: text('groupName'), name: text('name'), description: text('description') };
}

/** The first entry of a JSON array field, as an object; null when there is none. */
function firstEntry(body: Record<string, unknown> | null, field: string): Record<string, unknown> | null {
  const list = body?.[field];
  const first: unknown = Array.isArray(list) ? list[0] : null;
  return first !== null && typeof first === 'object' ? (first as Record<string, unknown>) : null;
}

function stringField(entry: Record<string, unknown> | null, field: string): string | null {
  const value = entry?.[field];
  return typeof value === 'string' && value ? value : null;
}

/** True when the last segment of the callback's path is the carrier's secret (compared in constant time). */
function pathEndsInSecret(call: ProviderCallback, secret: string): boolean {
  if (!secret) return false;
  const given = new URL(call.url).pathname.split('/').at(-1) ?? '';
  // Digests of equal length, so that the comparison takes no longer for a closer guess.
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

export function createInfobipProvider(settings: ProviderSettings): HttpProvider {
  if (!settings.secret) throw invalid('the user must be the API key');
  const from = settings.url.searchParams.get('from');
  if (from !== null && !SENDER.test(from)) throw invalid('from must be a number or an alphanumeric sender');
  const endpoint = `${settings.baseUrl}/sms/2/text/advanced`;
  const headers = {
    authorization: `App ${settings.secret}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };

  return {
    kind: 'infobip',
    // Infobip takes our reference as the message's id without refusing a second one.
    deduplicatesByReference: false,
    request(sms: OutboundSms, context: SendContext) {
      const sender = sms.from ?? from;
      const message = {
        destinations: [{ to: withoutPlus(sms.to), messageId: sms.reference }],
        ...(sender ? { from: /^\+?[0-9]+$/.test(sender) ? withoutPlus(sender) : sender } : {}),
        text: sms.text,
        ...(context.callbackUrl
          ? { notifyUrl: context.callbackUrl, notifyContentType: 'application/json' }
          : {}),
        callbackData: sms.reference,
        ...(sms.validUntil
          ? { validityPeriod: remainingValidity(sms.validUntil, context.now, 60_000, VALIDITY_MINUTES) }
          : {}),
      };
      return { method: 'POST', url: endpoint, headers, body: JSON.stringify({ messages: [message] }) };
    },
    answer: readAnswer,
    verify: (call: ProviderCallback) => pathEndsInSecret(call, settings.callbackSecret),
    events: readCallback,
  };
}

/** {requestError: {serviceException: {messageId, text}}}, or the newer {errorCode, description}. */
function refusal(response: ProviderResponse): ProviderAnswer {
  const body = parseJsonObject(response.body);
  const requestError = body?.requestError as Record<string, unknown> | undefined;
  const exception = (requestError?.serviceException ?? requestError?.policyException) as
    | Record<string, unknown>
    | undefined;
  const code = stringField(exception ?? null, 'messageId') ?? stringField(body, 'errorCode');
  const text = stringField(exception ?? null, 'text') ?? stringField(body, 'description');
  return statusAnswer(response.status, code, text ?? response.body.slice(0, 200));
}

function readAnswer(response: ProviderResponse): ProviderAnswer {
  if (response.status < 200 || response.status >= 300) return refusal(response);
  const sent = firstEntry(parseJsonObject(response.body), 'messages');
  const messageId = stringField(sent, 'messageId');
  const status = statusOf(sent?.status);
  if (!messageId || !status)
    return { outcome: 'temporary', message: `HTTP ${response.status} without a message` };
  if (status.groupName !== 'REJECTED') return { outcome: 'accepted', providerMessageId: messageId };
  const text = status.description || status.name;
  if (ACCOUNT_REJECTIONS.has(status.name))
    return { outcome: 'temporary', message: `${status.name}: ${text}` };
  return { outcome: 'rejected', code: safeCode(status.name || 'REJECTED'), message: text };
}

function timeOf(value: unknown, fallback: Date): Date {
  if (typeof value !== 'string') return fallback;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? fallback : at;
}

/**
 * A delivery report. Without intermediateReport (Tern never asks for it) Infobip sends one report
 * per message, its final one: DELIVERED (to the handset, or to the operator when that is all the
 * network tells) is delivered; UNDELIVERABLE, EXPIRED and REJECTED fail it with the error's name.
 */
function readReport(result: Record<string, unknown>, messageId: string, now: Date): ProviderEvent[] {
  const status = statusOf(result.status)!;
  const reference = stringField(result, 'callbackData');
  const report = {
    carrierMessageId: messageId,
    at: timeOf(result.doneAt, now),
    ...(reference ? { reference } : {}),
  };
  if (status.groupName === 'DELIVERED')
    return [{ kind: 'report', report: { ...report, status: 'delivered' } }];
  if (!FAILED_GROUPS.has(status.groupName)) return [];
  const error = statusOf(result.error);
  // An error named NO_ERROR (id 0) says nothing: the status then tells why.
  const named = error?.name && error.name !== 'NO_ERROR' ? error : status;
  return [
    {
      kind: 'report',
      report: {
        ...report,
        status: 'failed',
        error: { code: `carrier_${safeCode(named.name)}`, message: named.description || status.description },
      },
    },
  ];
}

function readResult(result: Record<string, unknown>, now: Date): ProviderEvent[] {
  const messageId = stringField(result, 'messageId');
  if (!messageId) return [];
  if (statusOf(result.status)) return readReport(result, messageId, now);
  const from = stringField(result, 'from');
  // `text` is the whole message; `cleanText` lacks its keyword.
  const text = stringField(result, 'text') ?? stringField(result, 'cleanText');
  if (!from || text === null) return [];
  const to = stringField(result, 'to');
  return [
    {
      kind: 'reply',
      reply: {
        carrierMessageId: messageId,
        from: withoutPlus(from),
        to: to ? withoutPlus(to) : null,
        text,
        at: timeOf(result.receivedAt, now),
      },
    },
  ];
}

function readCallback(call: ProviderCallback, now: Date): ProviderEvent[] {
  const results = parseJsonObject(call.rawBody.toString('utf8'))?.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((result: unknown) =>
    result !== null && typeof result === 'object' ? readResult(result as Record<string, unknown>, now) : [],
  );
}
