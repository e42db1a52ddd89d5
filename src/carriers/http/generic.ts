import { timingSafeEqual } from 'node:crypto';
import type { DeliveryReport, OutboundSms } from '../carrier.js';
import { type GenericTemplate, parseTemplate } from './generic-template.js';
import { headerOf, parseJsonObject, plusNumber, safeCode, statusAnswer } from './http-answers.js';
import type {
  HttpProvider,
  ProviderAnswer,
  ProviderCallback,
  ProviderEvent,
  ProviderResponse,
  ProviderSettings,
  SendContext,
} from './http-provider.js';

type Escape = (value: string) => string;

const jsonEscape: Escape = (value) => JSON.stringify(value).slice(1, -1);

/** Each {placeholder} of `text` replaced by its value, escaped for where it stands. */
function fill(text: string, values: Record<string, string>, escapeValue: Escape): string {
  return text.replace(/\{([a-z_]{1,32})\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? escapeValue(values[name]!) : whole,
  );
}

/** How placeholders are escaped in the body: by the body's content type. */
function bodyEscape(headers: Record<string, string>): Escape {
  const type = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '';
  if (type.includes('json')) return jsonEscape;
  if (type.includes('x-www-form-urlencoded')) return encodeURIComponent;
  return (value) => value;
}

function pick(
  body: string,
  how: { json_pointer: string } | { regex: string } | { use_reference: true } | undefined,
  json: Record<string, unknown> | null,
): string | null {
  if (!how || 'use_reference' in how) return null;
  if ('regex' in how) return new RegExp(how.regex).exec(body)?.[1] ?? null;
  let value: unknown = json;
  for (const step of how.json_pointer.split('/').slice(1)) {
    const key = step.replaceAll('~1', '/').replaceAll('~0', '~');
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  }
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
}

function readAnswer(
  template: GenericTemplate,
  response: ProviderResponse,
  reference: string,
): ProviderAnswer {
  const json = parseJsonObject(response.body);
  const { answer } = template;
  const ok = response.status >= 200 && response.status < 300;
  if (ok && answer.temporary_body && new RegExp(answer.temporary_body).test(response.body))
    return { outcome: 'temporary', message: `HTTP ${response.status}: ${response.body.slice(0, 200)}` };
  const refused = answer.rejected_body && new RegExp(answer.rejected_body).test(response.body);
  if (ok && !refused) {
    const id = 'use_reference' in answer.id ? reference : pick(response.body, answer.id, json);
    if (id) return { outcome: 'accepted', providerMessageId: id };
    return { outcome: 'temporary', message: `HTTP ${response.status} without the provider's id` };
  }
  const code = pick(response.body, answer.error_code, json);
  const message = response.body.slice(0, 200);
  if (ok) return { outcome: 'rejected', code: safeCode(code ?? 'rejected'), message };
  return statusAnswer(response.status, code, message);
}

/** A report's fields: the query's, then the body's (form or JSON object). */
function callbackFields(call: ProviderCallback): Map<string, string> {
  const fields = new Map(new URL(call.url).searchParams);
  const text = call.rawBody.toString('utf8');
  const json = parseJsonObject(text);
  const type = headerOf(call.headers, 'content-type') ?? '';
  const body: [string, unknown][] = json
    ? Object.entries(json)
    : type.includes('x-www-form-urlencoded')
      ? [...new URLSearchParams(text)]
      : [];
  for (const [name, value] of body)
    if (typeof value === 'string' || typeof value === 'number') fields.set(name, String(value));
  return fields;
}

function readReport(template: GenericTemplate, call: ProviderCallback, at: Date): ProviderEvent[] {
  const { report } = template;
  if (!report) return [];
  const fields = callbackFields(call);
  const id = fields.get(report.id);
  const status = fields.get(report.status);
  if (!id || !status) return [];
  const delivered = report.delivered.includes(status);
  if (!delivered && !report.failed.includes(status)) return [];
  const reference = report.reference ? fields.get(report.reference) : undefined;
  const base: DeliveryReport = {
    carrierMessageId: id,
    status: 'delivered',
    at,
    ...(reference ? { reference } : {}),
  };
  if (delivered) return [{ kind: 'report', report: base }];
  const code = (report.error_code ? fields.get(report.error_code) : undefined) ?? status;
  const error = { code: `carrier_${safeCode(code)}`, message: `The provider reported status ${status}` };
  return [{ kind: 'report', report: { ...base, status: 'failed', error } }];
}

/**
 * Any provider over HTTP, described by a template (generic-template.ts), as Kannel's generic HTTP
 * SMSC does. Its callbacks sign nothing: they are known by Tern's secret as the last path segment.
 */
export function createGenericProvider(settings: ProviderSettings, text: string | null): HttpProvider {
  const template = parseTemplate(text);
  const { request } = template;
  const headers = request.headers ?? {};
  const escapeBody = bodyEscape(headers);
  const expectedSecret = Buffer.from(settings.callbackSecret);
  return {
    kind: settings.url.protocol.slice(0, -1),
    deduplicatesByReference: false,
    request(sms: OutboundSms, context: SendContext) {
      const values = {
        to: sms.to,
        to_plus: plusNumber(sms.to),
        from: sms.from ?? '',
        text: sms.text,
        reference: sms.reference,
        callback_url: context.callbackUrl ?? '',
        username: decodeURIComponent(settings.url.username),
        password: settings.secret,
      };
      return {
        method: request.method,
        url: `${settings.baseUrl}${fill(request.url, values, encodeURIComponent)}`,
        headers: Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [name, fill(value, values, (v) => v)]),
        ),
        ...(request.body === undefined ? {} : { body: fill(request.body, values, escapeBody) }),
      };
    },
    answer: (response, sms) => readAnswer(template, response, sms.reference),
    verify(call: ProviderCallback) {
      const given = Buffer.from(new URL(call.url).pathname.split('/').at(-1) ?? '');
      return (
        expectedSecret.length > 0 &&
        given.length === expectedSecret.length &&
        timingSafeEqual(given, expectedSecret)
      );
    },
    events: (call, now) => readReport(template, call, now),
  };
}
