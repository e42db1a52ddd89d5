import { WebHookEventType, type WebHookPayload } from 'android-sms-gateway';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundSms } from '../../src/carriers/carrier.js';
import { androidWebhookId, createAndroidProvider } from '../../src/carriers/http/android.js';
import type { HttpProvider, SendContext } from '../../src/carriers/http/http-provider.js';
import { FakeAndroidGateway } from '../support/fake-providers/android.js';
import { CallbackCatcher, FakeProviderServer } from '../support/fake-providers/fake-server.js';

// Tern's module for the "SMS Gateway for Android" app against a loopback app: the webhooks and
// signing key it sets at start, the messages it hands over (and hands over again), and the signed
// webhooks it takes or refuses. Events are built with the app's own TypeScript types
// (android-sms-gateway), and in the current shape of the app's documentation.

const USER = 'sms';
const PASSWORD = 'Zk3pXw9q';
const SIGNING_KEY = 'tern-made-callback-secret-0123456789';
const REFERENCE = 'msg_0193b1c2d3e4f5a6b7c8d9e0f1a2b3c4';
const NOW = new Date('2026-11-25T13:00:00Z');

let phone: FakeAndroidGateway;
let catcher: CallbackCatcher;
let provider: HttpProvider;
let context: SendContext;

function providerFor(url: string, baseUrl: string): HttpProvider {
  return createAndroidProvider({
    carrier: 'phone-1',
    url: new URL(url),
    baseUrl,
    secret: PASSWORD,
    secretOptions: {},
    callbackSecret: SIGNING_KEY,
  });
}

function sms(overrides: Partial<OutboundSms> = {}): OutboundSms {
  return {
    reference: REFERENCE,
    to: '447700900000',
    text: 'Your code is 123456',
    encoding: 'GSM-7',
    segments: 1,
    from: null,
    validUntil: null,
    ...overrides,
  };
}

async function send(message: OutboundSms) {
  const response = await FakeProviderServer.perform(provider.request(message, context));
  return provider.answer(response, message);
}

async function start(): Promise<number[]> {
  const statuses: number[] = [];
  for (const request of provider.startRequests!(context))
    statuses.push((await FakeProviderServer.perform(request)).status);
  return statuses;
}

beforeAll(async () => {
  phone = await FakeAndroidGateway.start({ user: USER, password: PASSWORD });
  catcher = await new CallbackCatcher().listen();
  context = { callbackUrl: `${catcher.url}/carriers/phone-1/events`, now: NOW };
  provider = providerFor(`android://${USER}@${new URL(phone.url).host}?tls=false`, phone.url);
});

afterAll(async () => {
  await phone.close();
  await catcher.close();
});

describe('starting an Android gateway carrier', () => {
  it("sets the app's signing key and registers one webhook per event, the same ones on every start", async () => {
    expect(await start()).toEqual([200, 201, 201, 201]);
    expect(await start()).toEqual([200, 201, 201, 201]);
    expect(phone.signingKey).toBe(SIGNING_KEY);
    expect(Object.fromEntries(phone.webhooks)).toEqual({
      [androidWebhookId('phone-1', 'sms:received')]: { url: context.callbackUrl, event: 'sms:received' },
      [androidWebhookId('phone-1', 'sms:delivered')]: { url: context.callbackUrl, event: 'sms:delivered' },
      [androidWebhookId('phone-1', 'sms:failed')]: { url: context.callbackUrl, event: 'sms:failed' },
    });
    expect(androidWebhookId('phone-1', 'sms:received').length).toBeLessThanOrEqual(36);
  });

  it('asks nothing of the app when Tern has no public URL for its webhooks', () => {
    expect(provider.startRequests!({ callbackUrl: null, now: NOW })).toEqual([]);
  });
});

describe('sending through the Android app', () => {
  it('posts the message under our id, the number in E.164, with a delivery report and its ttl', async () => {
    const answer = await send(sms({ validUntil: new Date(NOW.getTime() + 3_600_000) }));
    expect(answer).toEqual({ outcome: 'accepted', providerMessageId: REFERENCE });
    expect(phone.lastSend()).toEqual({
      id: REFERENCE,
      textMessage: { text: 'Your code is 123456' },
      phoneNumbers: ['+447700900000'],
      withDeliveryReport: true,
      ttl: 3600,
    });
  });

  it('takes a repeated hand-over of the same message as done, and the phone keeps one message', async () => {
    const message = sms({ reference: 'msg_repeated' });
    expect(await send(message)).toEqual({ outcome: 'accepted', providerMessageId: 'msg_repeated' });
    const count = phone.messageIds.size;
    expect(await send(message)).toEqual({ outcome: 'accepted', providerMessageId: 'msg_repeated' });
    expect(phone.messageIds.size).toBe(count);
    expect(provider.deduplicatesByReference).toBe(true);
  });

  it("fails the message with the app's text on a 4xx, and leaves 429 and 5xx to the next carrier", async () => {
    expect(await send(sms({ reference: 'msg_bad', to: '12' }))).toEqual({
      outcome: 'rejected',
      code: '400',
      message: 'Invalid phone number',
    });
    phone.answerNext({ status: 429, body: { message: 'queue limits exceeded' } }, { status: 503, body: {} });
    expect(await send(sms({ reference: 'msg_t1' }))).toMatchObject({ outcome: 'temporary' });
    expect(await send(sms({ reference: 'msg_t2' }))).toMatchObject({ outcome: 'temporary' });
  });

  it('speaks to the cloud server under /3rdparty/v1, or under the path the URL gives', async () => {
    const cloud = providerFor(`android://${USER}@api.sms-gate.app`, 'https://api.sms-gate.app');
    expect(cloud.request(sms(), context).url).toBe('https://api.sms-gate.app/3rdparty/v1/message');
    const server = await FakeAndroidGateway.start({ user: USER, password: PASSWORD, prefix: '/3rdparty/v1' });
    const own = providerFor(
      `android://${USER}@${new URL(server.url).host}/3rdparty/v1?tls=false`,
      server.url,
    );
    const response = await FakeProviderServer.perform(own.request(sms(), context));
    expect(own.answer(response, sms())).toEqual({ outcome: 'accepted', providerMessageId: REFERENCE });
    await server.close();
  });
});

describe("the app's webhooks", () => {
  beforeEach(async () => {
    await start();
  });

  it('reads sms:delivered as delivered and sms:failed as failed with the reason, naming our message', async () => {
    const delivered: WebHookPayload = {
      event: WebHookEventType.SmsDelivered,
      payload: { messageId: REFERENCE, deliveredAt: '2026-11-25T20:01:00.000+07:00' },
    };
    expect(await phone.sendEvent(delivered)).toEqual([204]);
    expect(provider.verify(catcher.last(), new Date())).toBe(true);
    expect(provider.events(catcher.last(), NOW)).toEqual([
      {
        kind: 'report',
        report: {
          carrierMessageId: REFERENCE,
          reference: REFERENCE,
          status: 'delivered',
          at: new Date('2026-11-25T13:01:00Z'),
        },
      },
    ]);
    const failed: WebHookPayload = {
      event: WebHookEventType.SmsFailed,
      payload: { messageId: 'msg_2', failedAt: '2026-11-25T13:02:00.000Z', error: 'RESULT_ERROR_NO_SERVICE' },
    };
    await phone.sendEvent(failed);
    expect(provider.events(catcher.last(), NOW)).toMatchObject([
      { report: { status: 'failed', error: { code: 'carrier_failed', message: 'RESULT_ERROR_NO_SERVICE' } } },
    ]);
  });

  it('reads sms:received as a reply, in the types of the app and in its current documented shape', async () => {
    const legacy: WebHookPayload = {
      event: WebHookEventType.SmsReceived,
      payload: { message: 'STOP', phoneNumber: '+447700900001', receivedAt: '2026-11-25T13:03:00.000Z' },
    };
    await phone.sendEvent(legacy);
    const first = provider.events(catcher.last(), NOW);
    expect(first).toEqual([
      {
        kind: 'reply',
        reply: {
          carrierMessageId: expect.any(String),
          from: '447700900001',
          to: null,
          text: 'STOP',
          at: new Date('2026-11-25T13:03:00Z'),
        },
      },
    ]);
    const current = {
      event: 'sms:received',
      payload: {
        messageId: 'abc123',
        message: 'STOP',
        sender: '+447700900001',
        recipient: '+447700900999',
        simNumber: 1,
        receivedAt: '2026-11-25T13:04:00.000Z',
      },
    };
    await phone.sendEvent(current);
    const second = provider.events(catcher.last(), NOW);
    expect(second).toMatchObject([{ kind: 'reply', reply: { from: '447700900001', to: '447700900999' } }]);
    // The same text twice is two replies: each is known by its webhook call, not its content.
    const ids = [...first, ...second].map((event) =>
      event.kind === 'reply' ? event.reply.carrierMessageId : null,
    );
    expect(new Set(ids).size).toBe(2);
  });

  it('refuses a webhook unsigned, signed with another key, altered, or outside five minutes', async () => {
    const event: WebHookPayload = {
      event: WebHookEventType.SmsDelivered,
      payload: { messageId: REFERENCE, deliveredAt: '2026-11-25T13:01:00.000Z' },
    };
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (const options of [
      { unsigned: true },
      { key: 'someone-else' },
      { timestamp: nowSeconds - 301 },
      { timestamp: nowSeconds + 301 },
    ]) {
      await phone.sendEvent(event, options);
      expect(provider.verify(catcher.last(), new Date())).toBe(false);
    }
    await phone.sendEvent(event);
    const genuine = catcher.last();
    expect(provider.verify(genuine, new Date())).toBe(true);
    const altered = Buffer.from(genuine.rawBody.toString().replace(REFERENCE, 'msg_other'));
    expect(provider.verify({ ...genuine, rawBody: altered }, new Date())).toBe(false);
  });
});
