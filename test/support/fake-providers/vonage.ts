import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { InboundMessage, SMSStatus } from '@vonage/sms';
import { type FakeAnswer, FakeProviderServer, type ReceivedRequest } from './fake-server.js';

export type VonageSignatureMethod = 'md5hash' | 'md5' | 'sha1' | 'sha256' | 'sha512';

/** How Vonage calls a webhook: GET with query parameters, or POST with JSON or a form. */
export type VonageCallbackForm = 'query' | 'json' | 'form';

export interface SignedCallbackOptions {
  form: VonageCallbackForm;
  /** Unix seconds; now by default. */
  timestamp?: number;
  /** Leave `sig` out altogether. */
  unsigned?: boolean;
  /** Sign with another secret (a forger's). */
  secret?: string;
}

/**
 * Signs as Vonage's "Signing messages" guide describes, written here apart from Tern's code:
 * parameters sorted by name, `&name=value` with `&`/`=` in values made `_`, then MD5 of the
 * string and the secret, or an HMAC of the string keyed by the secret.
 */
export function signVonageParams(
  params: Record<string, string>,
  secret: string,
  method: VonageSignatureMethod,
): string {
  let text = '';
  for (const name of Object.keys(params).sort()) text += `&${name}=${params[name]!.replaceAll(/&|=/g, '_')}`;
  return method === 'md5hash'
    ? createHash('md5').update(`${text}${secret}`).digest('hex')
    : createHmac(method, secret).update(text).digest('hex').toUpperCase();
}

/** Vonage's SMS API on loopback: POST /sms/json, and its signed delivery receipts and inbound messages. */
export class FakeVonage extends FakeProviderServer {
  private nextId = 0x0b000001;

  constructor(
    readonly apiKey: string,
    private readonly apiSecret: string,
    readonly signatureSecret: string,
    readonly signatureMethod: VonageSignatureMethod = 'md5hash',
  ) {
    super();
  }

  static start(options: {
    apiKey: string;
    apiSecret: string;
    signatureSecret: string;
    method?: VonageSignatureMethod;
  }) {
    return new FakeVonage(
      options.apiKey,
      options.apiSecret,
      options.signatureSecret,
      options.method,
    ).listen();
  }

  /** The form of the latest send. */
  lastSend(): URLSearchParams {
    const send = this.received.filter((request) => request.path === '/sms/json').at(-1);
    if (!send) throw new Error('no send received');
    return new URLSearchParams(send.body);
  }

  /** The next send is refused with this status for every part (HTTP 200, as Vonage answers). */
  refuseNext(status: SMSStatus, errorText: string): void {
    this.answerNext({
      status: 200,
      body: { 'message-count': '1', messages: [{ status, 'error-text': errorText }] },
    });
  }

  /** The next send is refused for now at the HTTP level: 429 past the account's throughput, 503 while down. */
  refuseForNowNext(status: 429 | 503): void {
    this.answerNext(
      status === 429
        ? {
            status,
            body: {
              type: 'https://developer.vonage.com/api-errors#throttled',
              title: 'Throttled',
              detail: 'Please wait, then retry your request',
            },
          }
        : { status, body: 'Service Unavailable', headers: { 'content-type': 'text/plain' } },
    );
  }

  protected respond(request: ReceivedRequest): FakeAnswer {
    if (request.method !== 'POST' || request.path !== '/sms/json') return { status: 404, body: {} };
    const form = new URLSearchParams(request.body);
    if (form.get('api_key') !== this.apiKey || form.get('api_secret') !== this.apiSecret)
      return this.refusal('4', 'Bad Credentials');
    if (!form.get('from') || !form.get('to') || !form.get('text'))
      return this.refusal('2', 'Missing from param');
    const text = form.get('text')!;
    const unicode = form.get('type') === 'unicode';
    const [single, part] = unicode ? [70, 67] : [160, 153];
    const parts = text.length <= single ? 1 : Math.ceil(text.length / part);
    const messages = Array.from({ length: parts }, () => ({
      to: form.get('to'),
      'message-id': (this.nextId++).toString(16).toUpperCase(),
      status: '0',
      'remaining-balance': '15.53590000',
      'message-price': '0.03330000',
      network: '23410',
      ...(form.get('client-ref') ? { 'client-ref': form.get('client-ref') } : {}),
    }));
    return { status: 200, body: { 'message-count': String(parts), messages } };
  }

  private refusal(status: string, errorText: string): FakeAnswer {
    return { status: 200, body: { 'message-count': '1', messages: [{ status, 'error-text': errorText }] } };
  }

  /** A delivery receipt for a message, as Vonage sends it to the send's `callback` URL. */
  receipt(
    messageId: string,
    fields: { status: string; errCode?: string; clientRef?: string; to?: string },
  ): Record<string, string> {
    return {
      msisdn: '447700900000',
      to: fields.to ?? 'ACME',
      'network-code': '23410',
      messageId,
      price: '0.03330000',
      status: fields.status,
      scts: '2011251310',
      'err-code': fields.errCode ?? '0',
      'api-key': this.apiKey,
      'message-timestamp': '2026-11-25 13:10:29',
      ...(fields.clientRef ? { 'client-ref': fields.clientRef } : {}),
    };
  }

  /** An inbound message to the account's number, in the shape @vonage/sms types it. */
  inbound(fields: { from: string; to: string; text: string; unicode?: boolean }): Record<string, string> {
    const message: Partial<InboundMessage> = {
      'api-key': this.apiKey,
      msisdn: fields.from,
      to: fields.to,
      messageId: randomUUID().replaceAll('-', '').slice(0, 16).toUpperCase(),
      text: fields.text,
      type: fields.unicode ? 'unicode' : 'text',
      keyword: fields.text.split(' ')[0]!.toUpperCase(),
      'message-timestamp': '2026-11-25 13:12:00',
    };
    return message as Record<string, string>;
  }

  /** Calls `url` with `params`, signed as Vonage signs webhooks (timestamp, nonce, sig). */
  async sendSigned(
    url: string,
    params: Record<string, string>,
    options: SignedCallbackOptions,
  ): Promise<number> {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signed: Record<string, string> = { ...params, timestamp, nonce: randomUUID() };
    if (!options.unsigned)
      signed.sig = signVonageParams(signed, options.secret ?? this.signatureSecret, this.signatureMethod);
    const target = new URL(url);
    let response: Response;
    if (options.form === 'query') {
      for (const [name, value] of Object.entries(signed)) target.searchParams.set(name, value);
      response = await fetch(target, { method: 'GET' });
    } else if (options.form === 'json') {
      response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signed),
      });
    } else {
      response = await fetch(target, { method: 'POST', body: new URLSearchParams(signed) });
    }
    await response.body?.cancel();
    return response.status;
  }
}
