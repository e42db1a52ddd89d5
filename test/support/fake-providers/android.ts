import { createHmac, randomUUID } from 'node:crypto';
import type { RegisterWebHookRequest, WebHookPayload } from 'android-sms-gateway';
import { type FakeAnswer, FakeProviderServer, type ReceivedRequest } from './fake-server.js';

export interface AndroidEventOptions {
  /** Unix seconds for X-Timestamp; now by default. */
  timestamp?: number;
  /** Sign with this key instead of the app's (a forger's). */
  key?: string;
  unsigned?: boolean;
}

/**
 * The "SMS Gateway for Android" app's API on loopback (its local server, or the cloud server under
 * a path prefix): messages with their ids, the signing key, and the webhooks registered, to
 * which it posts its events signed as the app signs them.
 */
export class FakeAndroidGateway extends FakeProviderServer {
  /** The app makes up a signing key until one is set (WebhooksSettings in the app). */
  signingKey = randomUUID().slice(0, 8);
  readonly webhooks = new Map<string, Required<Pick<RegisterWebHookRequest, 'url' | 'event'>>>();
  readonly messageIds = new Set<string>();
  /**
   * Where a webhook's URL is reached from here: the URL as registered by default; in a test whose
   * PUBLIC_URL stands for a proxy in front of Tern, the address behind it.
   */
  reach: (url: string) => string = (url) => url;

  constructor(
    private readonly user: string,
    private readonly password: string,
    readonly prefix = '',
  ) {
    super();
  }

  static start(options: { user: string; password: string; prefix?: string }): Promise<FakeAndroidGateway> {
    return new FakeAndroidGateway(options.user, options.password, options.prefix).listen();
  }

  /** The body of the latest message sent. */
  lastSend(): Record<string, unknown> {
    const send = this.received.filter((request) => request.path === `${this.prefix}/message`).at(-1);
    if (!send) throw new Error('no message received');
    return JSON.parse(send.body);
  }

  /** The next request is refused for now: 429 past the server's queue limit, 503 while it is down. */
  refuseForNowNext(status: 429 | 503): void {
    this.answerNext({
      status,
      body: { message: status === 429 ? 'queue limits exceeded' : 'Service Unavailable' },
    });
  }

  protected respond(request: ReceivedRequest): FakeAnswer {
    const expected = `Basic ${Buffer.from(`${this.user}:${this.password}`).toString('base64')}`;
    if (request.headers.authorization !== expected) return { status: 401, body: { message: 'Unauthorized' } };
    const route = `${request.method} ${request.path}`;
    const body = request.body ? JSON.parse(request.body) : {};
    if (route === `POST ${this.prefix}/message` || route === `POST ${this.prefix}/messages`)
      return this.enqueue(body);
    if (route === `PATCH ${this.prefix}/settings`) {
      if (typeof body.webhooks?.signing_key === 'string') this.signingKey = body.webhooks.signing_key;
      return { status: 200, body: { webhooks: { internet_required: true, retry_count: 15 } } };
    }
    if (route === `POST ${this.prefix}/webhooks`) {
      const id = body.id ?? randomUUID();
      // A registration with a known id replaces it, as the app's WebHooksService does.
      this.webhooks.set(id, { url: body.url, event: body.event });
      return { status: 201, body: { id, url: body.url, event: body.event } };
    }
    return { status: 404, body: { message: 'Not Found' } };
  }

  private enqueue(body: {
    id?: string;
    textMessage?: { text: string };
    phoneNumbers?: string[];
  }): FakeAnswer {
    const numbers = body.phoneNumbers ?? [];
    if (numbers.length === 0 || numbers.some((number) => !/^\+[1-9][0-9]{6,14}$/.test(number)))
      return { status: 400, body: { message: 'Invalid phone number' } };
    if (!body.textMessage?.text) return { status: 400, body: { message: 'Text message is empty' } };
    const id = body.id ?? randomUUID();
    if (this.messageIds.has(id))
      return { status: 409, body: { message: 'Message with such ID already exists' } };
    this.messageIds.add(id);
    return {
      status: 202,
      body: {
        id,
        deviceId: 'ffffffffceb0b1db0000018e937c815b',
        state: 'Pending',
        isHashed: false,
        isEncrypted: false,
        recipients: numbers.map((phoneNumber) => ({ phoneNumber, state: 'Pending' })),
      },
    };
  }

  /**
   * Posts an event to every webhook registered for it, in the app's envelope, signed with the
   * app's signing key as its PayloadSigningPlugin does. Answers each webhook's HTTP status.
   */
  async sendEvent(
    event: WebHookPayload | { event: string; payload: Record<string, unknown> },
    options: AndroidEventOptions = {},
  ): Promise<number[]> {
    const targets = [...this.webhooks.entries()].filter(([, hook]) => hook.event === event.event);
    const statuses: number[] = [];
    for (const [webhookId, hook] of targets) {
      const body = JSON.stringify({
        deviceId: 'ffffffffceb0b1db0000018e937c815b',
        event: event.event,
        id: randomUUID().replaceAll('-', '').slice(0, 21),
        payload: event.payload,
        webhookId,
      });
      const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', options.key ?? this.signingKey)
        .update(body + timestamp)
        .digest('hex');
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (!options.unsigned) Object.assign(headers, { 'x-signature': signature, 'x-timestamp': timestamp });
      const response = await fetch(this.reach(hook.url), { method: 'POST', headers, body });
      await response.body?.cancel();
      statuses.push(response.status);
    }
    return statuses;
  }
}
