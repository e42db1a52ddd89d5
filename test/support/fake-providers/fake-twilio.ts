import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';

// A loopback stand-in for Twilio's Messages resource (2010-04-01), speaking its documented wire
// format: form-encoded POST /2010-04-01/Accounts/{AccountSid}/Messages.json with HTTP Basic,
// 201 with the message's JSON, errors as {code, message, more_info, status}. Its callbacks are
// signed with the twilio package's own getExpectedTwilioSignature, not with Tern's code.

export const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const AUTH_TOKEN = 'twilio-auth-token-0123456789abcdef';

export interface TwilioMessage {
  sid: string;
  form: URLSearchParams;
}

/** How the next request is answered: taken, refused with a status and Twilio's error, or never. */
export type TwilioBehaviour =
  | { kind: 'accept' }
  | { kind: 'error'; status: number; code: number; message: string }
  | { kind: 'hang' };

export class FakeTwilio {
  readonly messages: TwilioMessage[] = [];
  /** Every request that reached the Messages resource, answered or not. */
  requests = 0;
  /** Runs before a taken message's answer goes out (a callback that overtakes the answer). */
  onMessage: ((message: TwilioMessage) => Promise<void>) | null = null;
  /** Runs once a taken message's answer went out (a provider that reports at once, for the bench). */
  onAnswered: ((message: TwilioMessage) => void) | null = null;
  /**
   * When set, Twilio calls each taken message's StatusCallback back by itself, `sent` then
   * `delivered`, signed; `reach` gives the address the callback URL is reached at from here (the
   * address behind the proxy a test's PUBLIC_URL stands for). Unset, a test posts callbacks itself.
   */
  statusCallbacks: { reach: (url: string) => string } | null = null;
  /** The HTTP status of each status callback Twilio made by itself, in order (0: none came). */
  readonly callbackAnswers: number[] = [];
  private readonly callbacksUnderWay = new Set<Promise<void>>();
  private behaviours: TwilioBehaviour[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeTwilio> {
    let fake: FakeTwilio | null = null;
    const server = createServer((request, response) => void fake!.handle(request, response));
    fake = new FakeTwilio(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The carrier URL for Tern: plain HTTP to this loopback server. */
  url(options = 'from=+15550001111'): string {
    return `twilio://${ACCOUNT_SID}:${AUTH_TOKEN}@127.0.0.1:${this.port}?tls=false&${options}`;
  }

  /** The next requests are answered so, in order; then accepted again. */
  answerNext(...behaviours: TwilioBehaviour[]): void {
    this.behaviours.push(...behaviours);
  }

  message(to: string): TwilioMessage | undefined {
    return this.messages.find((message) => message.form.get('To') === to);
  }

  /** Resolves once every status callback started so far has been answered. */
  async callbacksAnswered(): Promise<void> {
    await Promise.all([...this.callbacksUnderWay]);
  }

  async close(): Promise<void> {
    await this.callbacksAnswered();
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const expectedAuth = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`;
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`)
      return answer(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
    if (request.headers.authorization !== expectedAuth)
      return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
    this.requests += 1;
    const behaviour = this.behaviours.shift() ?? { kind: 'accept' };
    if (behaviour.kind === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (behaviour.kind === 'error')
      return answer(behaviour.status, {
        code: behaviour.code,
        message: behaviour.message,
        more_info: `https://www.twilio.com/docs/errors/${behaviour.code}`,
        status: behaviour.status,
      });
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const sid = `SM${randomBytes(16).toString('hex')}`;
    this.messages.push({ sid, form });
    await this.onMessage?.({ sid, form });
    answer(201, {
      sid,
      account_sid: ACCOUNT_SID,
      to: form.get('To'),
      from: form.get('From'),
      messaging_service_sid: form.get('MessagingServiceSid'),
      body: form.get('Body'),
      status: 'queued',
      num_segments: '1',
      error_code: null,
      error_message: null,
      uri: `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${sid}.json`,
    });
    this.onAnswered?.({ sid, form });
    if (this.statusCallbacks) this.callBack({ sid, form }, this.statusCallbacks.reach);
  }

  /** As Twilio does once the message is on its way, then on the handset: one callback per status. */
  private callBack(message: TwilioMessage, reach: (url: string) => string): void {
    const calls = (async () => {
      for (const status of ['sent', 'delivered'] as const) {
        const callback = statusCallback(message, status);
        const response = await fetch(reach(callback.url), {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-twilio-signature': callback.signature,
          },
          body: new URLSearchParams(callback.params),
        });
        await response.body?.cancel();
        this.callbackAnswers.push(response.status);
      }
    })();
    // A callback Tern never answered counts as 0: Twilio would log it and give up.
    const underWay = calls
      .catch(() => void this.callbackAnswers.push(0))
      .finally(() => this.callbacksUnderWay.delete(underWay));
    this.callbacksUnderWay.add(underWay);
  }
}

export interface SignedCallback {
  /** The URL Twilio calls, as it was given (PUBLIC_URL…). */
  url: string;
  params: Record<string, string>;
  signature: string;
}

/** A status callback for a message, as Twilio sends it to the message's StatusCallback. */
export function statusCallback(
  message: TwilioMessage,
  status: 'queued' | 'sent' | 'delivered' | 'undelivered' | 'failed',
  errorCode?: string,
): SignedCallback {
  const url = message.form.get('StatusCallback');
  if (!url) throw new Error('the message has no StatusCallback');
  const params: Record<string, string> = {
    AccountSid: ACCOUNT_SID,
    From: message.form.get('From') ?? '',
    To: message.form.get('To') ?? '',
    MessageSid: message.sid,
    SmsSid: message.sid,
    MessageStatus: status,
    SmsStatus: status,
    ApiVersion: '2010-04-01',
    ...(errorCode ? { ErrorCode: errorCode } : {}),
  };
  return signed(url, params);
}

/** An incoming message, as Twilio posts it to the number's messaging webhook. */
export function incomingMessage(url: string, from: string, to: string, body: string): SignedCallback {
  const sid = `SM${randomBytes(16).toString('hex')}`;
  return signed(url, {
    AccountSid: ACCOUNT_SID,
    ApiVersion: '2010-04-01',
    Body: body,
    From: from,
    To: to,
    MessageSid: sid,
    SmsMessageSid: sid,
    SmsSid: sid,
    SmsStatus: 'received',
    NumMedia: '0',
    NumSegments: '1',
  });
}

export function signed(url: string, params: Record<string, string>): SignedCallback {
  return { url, params, signature: twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params) };
}
