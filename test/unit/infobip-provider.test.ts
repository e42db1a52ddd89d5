import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundSms } from '../../src/carriers/carrier.js';
import type { HttpProvider } from '../../src/carriers/http/http-provider.js';
import { createInfobipProvider } from '../../src/carriers/http/infobip.js';
import { CallbackCatcher, FakeProviderServer } from '../support/fake-providers/fake-server.js';
import { FakeInfobip, INFOBIP_STATUSES } from '../support/fake-providers/infobip.js';

// Tern's Infobip module against a loopback Infobip: the request it makes, how it reads the
// answers and error answers, and the reports and inbound messages posted to its secret URL.

const API_KEY = '003026bbc133714df1834b8638bb496e-8f4b3d9a-e931-478d-a994-28a725159ab9';
const CALLBACK_SECRET = 'Kq3v9Tz0cWm2Xb7LrP4sYd8N';
const REFERENCE = 'msg_0193b1c2d3e4f5a6b7c8d9e0f1a2b3c4';
const NOW = new Date('2026-11-25T13:00:00Z');

let fake: FakeInfobip;
let catcher: CallbackCatcher;
let provider: HttpProvider;
let callbackUrl: string;

function providerFor(server: FakeProviderServer, query = 'from=ACME'): HttpProvider {
  return createInfobipProvider({
    carrier: 'infobip-eu',
    // The API key is the URL's user, sealed apart: the URL as stored has none.
    url: new URL(`infobip://${new URL(server.url).host}?tls=false&${query}`),
    baseUrl: server.url,
    secret: API_KEY,
    secretOptions: {},
    callbackSecret: CALLBACK_SECRET,
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

async function send(message: OutboundSms, through = provider) {
  const response = await FakeProviderServer.perform(through.request(message, { callbackUrl, now: NOW }));
  return through.answer(response, message);
}

beforeAll(async () => {
  fake = await FakeInfobip.start(API_KEY);
  catcher = await new CallbackCatcher().listen();
  callbackUrl = `${catcher.url}/carriers/infobip-eu/events/${CALLBACK_SECRET}`;
  provider = providerFor(fake);
});

afterAll(async () => {
  await fake.close();
  await catcher.close();
});

describe('sending through Infobip', () => {
  it('posts one message with our reference as its id, the notify URL, callback data and validity', async () => {
    const validUntil = new Date(NOW.getTime() + 90 * 60_000 + 59_000);
    const answer = await send(sms({ validUntil }));
    expect(answer).toEqual({ outcome: 'accepted', providerMessageId: REFERENCE });
    expect(fake.received.at(-1)!.headers.authorization).toBe(`App ${API_KEY}`);
    expect(fake.lastSend()).toEqual({
      messages: [
        {
          destinations: [{ to: '447700900000', messageId: REFERENCE }],
          from: 'ACME',
          text: 'Your code is 123456',
          notifyUrl: callbackUrl,
          notifyContentType: 'application/json',
          callbackData: REFERENCE,
          validityPeriod: 90,
        },
      ],
    });
  });

  it('caps the validity at the 48 hours Infobip keeps a message', async () => {
    await send(sms({ validUntil: new Date(NOW.getTime() + 72 * 3_600_000) }));
    expect(fake.lastSend().messages[0]!.validityPeriod).toBe(2880);
  });

  it("fails the message with the status's name when Infobip rejects it", async () => {
    fake.statusNext(INFOBIP_STATUSES.rejectedDestination);
    expect(await send(sms())).toEqual({
      outcome: 'rejected',
      code: 'REJECTED_DESTINATION',
      message: 'Invalid destination address.',
    });
  });

  it('leaves the message to the next carrier when the account is out of credit', async () => {
    fake.statusNext(INFOBIP_STATUSES.rejectedNoCredit);
    expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
  });

  it("fails with Infobip's error id on a 4xx, and leaves 429 and 5xx to the next carrier", async () => {
    const wrongKey = createInfobipProvider({
      carrier: 'infobip-eu',
      url: new URL(`infobip://${new URL(fake.url).host}?tls=false`),
      baseUrl: fake.url,
      secret: 'not-the-key',
      secretOptions: {},
      callbackSecret: CALLBACK_SECRET,
    });
    expect(await send(sms(), wrongKey)).toEqual({
      outcome: 'rejected',
      code: 'UNAUTHORIZED',
      message: 'Invalid login details',
    });
    const tooMany = {
      requestError: { serviceException: { messageId: 'TOO_MANY_REQUESTS', text: 'Too many' } },
    };
    fake.answerNext({ status: 429, body: tooMany }, { status: 500, body: 'oops' });
    expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
    expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
  });

  it('refuses to be made without its API key', () => {
    expect(() =>
      createInfobipProvider({
        carrier: 'x',
        url: new URL('infobip://example.api.infobip.com'),
        baseUrl: 'https://example.api.infobip.com',
        secret: '',
        secretOptions: {},
        callbackSecret: CALLBACK_SECRET,
      }),
    ).toThrow(/API key/);
  });
});

describe('Infobip reports and inbound messages', () => {
  it('takes a delivered report to the secret URL, naming our message', async () => {
    await fake.sendReport(callbackUrl, {
      messageId: REFERENCE,
      callbackData: REFERENCE,
      status: INFOBIP_STATUSES.deliveredToHandset,
    });
    const call = catcher.last();
    expect(provider.verify(call, new Date())).toBe(true);
    expect(provider.events(call, new Date())).toEqual([
      {
        kind: 'report',
        report: {
          carrierMessageId: REFERENCE,
          reference: REFERENCE,
          status: 'delivered',
          at: new Date('2026-11-25T13:00:04Z'),
        },
      },
    ]);
  });

  it("fails the message with Infobip's error name, or the status's when the error says none", async () => {
    const absent = {
      groupId: 1,
      groupName: 'HANDSET_ERRORS',
      id: 27,
      name: 'EC_ABSENT_SUBSCRIBER',
      description: 'Absent Subscriber',
      permanent: false,
    };
    await fake.sendReport(callbackUrl, {
      messageId: 'm-1',
      status: INFOBIP_STATUSES.undeliverable,
      error: absent,
    });
    expect(provider.events(catcher.last(), new Date())).toMatchObject([
      {
        report: {
          status: 'failed',
          error: { code: 'carrier_EC_ABSENT_SUBSCRIBER', message: 'Absent Subscriber' },
        },
      },
    ]);
    await fake.sendReport(callbackUrl, { messageId: 'm-2', status: INFOBIP_STATUSES.expired });
    expect(provider.events(catcher.last(), new Date())).toMatchObject([
      {
        report: { status: 'failed', error: { code: 'carrier_EXPIRED_EXPIRED', message: 'Message expired' } },
      },
    ]);
  });

  it('reads a pending report as nothing yet', async () => {
    await fake.sendReport(callbackUrl, { messageId: 'm-3', status: INFOBIP_STATUSES.pendingAccepted });
    expect(provider.events(catcher.last(), new Date())).toEqual([]);
  });

  it('takes an inbound message with its whole text, keyword included', async () => {
    await fake.sendInbound(callbackUrl, { from: '447700900001', to: '447860099299', text: 'STOP please' });
    const call = catcher.last();
    expect(provider.verify(call, new Date())).toBe(true);
    const [event] = provider.events(call, new Date());
    expect(event).toEqual({
      kind: 'reply',
      reply: {
        carrierMessageId: expect.any(String),
        from: '447700900001',
        to: '447860099299',
        text: 'STOP please',
        at: new Date('2026-11-25T13:05:00Z'),
      },
    });
  });

  it('refuses a call whose path does not end in the secret', async () => {
    const base = `${catcher.url}/carriers/infobip-eu/events`;
    for (const url of [base, `${base}/${CALLBACK_SECRET.slice(0, -1)}`, `${base}/${CALLBACK_SECRET}x`]) {
      await fake.sendReport(url, { messageId: 'm-4', status: INFOBIP_STATUSES.deliveredToHandset });
      expect(provider.verify(catcher.last(), new Date())).toBe(false);
    }
  });
});
