import { createHash } from 'node:crypto';
import { SMS, SMSStatus } from '@vonage/sms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundSms } from '../../src/carriers/carrier.js';
import { splitCarrierUrl } from '../../src/carriers/carrier-url.js';
import type { HttpProvider, ProviderSettings } from '../../src/carriers/http/http-provider.js';
import { createVonageProvider } from '../../src/carriers/http/vonage.js';
import { CallbackCatcher, FakeProviderServer } from '../support/fake-providers/fake-server.js';
import {
  FakeVonage,
  signVonageParams,
  type VonageSignatureMethod,
} from '../support/fake-providers/vonage.js';

// Tern's Vonage module against a loopback Vonage: the requests it makes, how it reads Vonage's
// answers, and the signed webhooks it takes or refuses. The fake signs callbacks as Vonage's guide
// describes, and Vonage's own library (@vonage/sms verifySignature) confirms each signature.

const API_KEY = 'abcd1234';
const API_SECRET = 'abcdef0123456789';
const SIGNATURE_SECRET = 'sig-secret-0123456789';
const CALLBACK_PATH = '/carriers/vonage-uk/events';

let fake: FakeVonage;
let catcher: CallbackCatcher;
let provider: HttpProvider;

/** The provider as a carrier stored with this URL query makes it: its secret options taken out of the URL. */
function settingsFor(server: FakeProviderServer, query: string): ProviderSettings {
  const address = new URL(server.url);
  const { url, secretOptions } = splitCarrierUrl(`vonage://${API_KEY}@${address.host}?tls=false&${query}`);
  return {
    carrier: 'vonage-uk',
    url: new URL(url),
    baseUrl: server.url,
    secret: API_SECRET,
    secretOptions,
    callbackSecret: 'unused-by-vonage',
  };
}

function sms(overrides: Partial<OutboundSms> = {}): OutboundSms {
  return {
    reference: 'msg_0193b1c2d3e4f5a6b7c8d9e0f1a2b3c4',
    to: '447700900000',
    text: 'Your code is 123456',
    encoding: 'GSM-7',
    segments: 1,
    from: null,
    validUntil: null,
    ...overrides,
  };
}

const NOW = new Date('2026-11-25T13:00:00Z');

async function send(message: OutboundSms) {
  const callbackUrl = `${catcher.url}${CALLBACK_PATH}`;
  const response = await FakeProviderServer.perform(provider.request(message, { callbackUrl, now: NOW }));
  return provider.answer(response, message);
}

beforeAll(async () => {
  fake = await FakeVonage.start({
    apiKey: API_KEY,
    apiSecret: API_SECRET,
    signatureSecret: SIGNATURE_SECRET,
  });
  catcher = await new CallbackCatcher().listen();
  provider = createVonageProvider(settingsFor(fake, `from=ACME&signature_secret=${SIGNATURE_SECRET}`));
});

afterAll(async () => {
  await fake.close();
  await catcher.close();
});

describe('sending through Vonage', () => {
  it('posts the form Vonage documents: credentials, sender, number without +, client-ref, callback, ttl', async () => {
    const validUntil = new Date(NOW.getTime() + 3_600_000);
    const answer = await send(sms({ to: '447700900000', validUntil }));
    expect(answer).toEqual({ outcome: 'accepted', providerMessageId: expect.stringMatching(/^[0-9A-F]+$/) });
    const form = fake.lastSend();
    expect(Object.fromEntries(form)).toEqual({
      api_key: API_KEY,
      api_secret: API_SECRET,
      from: 'ACME',
      to: '447700900000',
      text: 'Your code is 123456',
      'client-ref': 'msg_0193b1c2d3e4f5a6b7c8d9e0f1a2b3c4',
      callback: `${catcher.url}${CALLBACK_PATH}`,
      ttl: '3600000',
    });
  });

  it("sends UCS-2 as type=unicode and the account's own sender when it has one", async () => {
    await send(sms({ text: 'Привет', encoding: 'UCS-2', from: '+447700900123' }));
    expect(fake.lastSend().get('type')).toBe('unicode');
    expect(fake.lastSend().get('from')).toBe('447700900123');
  });

  it("takes a long message under its first part's id, every part being taken", async () => {
    const message = sms({ text: 'x'.repeat(400), segments: 3 });
    const response = await FakeProviderServer.perform(
      provider.request(message, { callbackUrl: null, now: NOW }),
    );
    const parts = JSON.parse(response.body).messages as { 'message-id': string }[];
    expect(parts).toHaveLength(3);
    expect(provider.answer(response, message)).toEqual({
      outcome: 'accepted',
      providerMessageId: parts[0]!['message-id'],
    });
    expect(fake.lastSend().has('callback')).toBe(false);
  });

  it("fails the message with Vonage's status and text when it refuses it for good", async () => {
    fake.refuseNext(SMSStatus.INVALID_SENDER_ADDRESS, 'Invalid Sender Address');
    expect(await send(sms())).toEqual({ outcome: 'rejected', code: '15', message: 'Invalid Sender Address' });
  });

  it('leaves the message to the next carrier when Vonage throttles, errs inside, or has no credit left', async () => {
    for (const status of [SMSStatus.THROTTLED, SMSStatus.INTERNAL_ERROR, SMSStatus.PARTNER_QUOTA_VIOLATION]) {
      fake.refuseNext(status, 'not now');
      expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
    }
  });

  it('reads HTTP 429 and 5xx as temporary, another 4xx as a refusal', async () => {
    fake.answerNext({ status: 429, body: {} }, { status: 503, body: 'down' }, { status: 401, body: 'no' });
    expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
    expect(await send(sms())).toMatchObject({ outcome: 'temporary' });
    expect(await send(sms())).toEqual({ outcome: 'rejected', code: '401', message: 'no' });
  });

  it('fails a message only some of whose parts were taken, rather than send those parts twice', async () => {
    fake.answerNext({
      status: 200,
      body: {
        'message-count': '2',
        messages: [
          { status: '0', 'message-id': '0B000001' },
          { status: '1', 'error-text': 'Throttled' },
        ],
      },
    });
    expect(await send(sms({ segments: 2 }))).toEqual({
      outcome: 'rejected',
      code: '1',
      message: '1 of 2 parts taken, then: Throttled',
    });
  });

  it('refuses to be made without a signature secret, or with an unknown signature method', () => {
    expect(() => createVonageProvider(settingsFor(fake, 'from=ACME'))).toThrow(/signature_secret/);
    expect(() =>
      createVonageProvider(settingsFor(fake, 'signature_secret=x&signature_method=crc32')),
    ).toThrow(/signature_method/);
  });
});

describe('Vonage webhooks', () => {
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  it('takes a delivered receipt sent as a signed GET, naming our message by its client-ref', async () => {
    const receipt = fake.receipt('0B00000127FDBC63', { status: 'delivered', clientRef: 'msg_1' });
    await fake.sendSigned(`${catcher.url}${CALLBACK_PATH}`, receipt, { form: 'query' });
    const call = catcher.last();
    expect(call.method).toBe('GET');
    expect(provider.verify(call, new Date())).toBe(true);
    expect(provider.events(call, new Date())).toEqual([
      {
        kind: 'report',
        report: {
          carrierMessageId: '0B00000127FDBC63',
          reference: 'msg_1',
          status: 'delivered',
          at: new Date('2026-11-25T13:10:29Z'),
        },
      },
    ]);
  });

  it("fails the message with Vonage's err-code from a signed JSON receipt", async () => {
    const receipt = fake.receipt('0B00000127FDBC64', { status: 'failed', errCode: '6', clientRef: 'msg_2' });
    await fake.sendSigned(`${catcher.url}${CALLBACK_PATH}`, receipt, { form: 'json' });
    const call = catcher.last();
    expect(provider.verify(call, new Date())).toBe(true);
    expect(provider.events(call, new Date())).toEqual([
      {
        kind: 'report',
        report: {
          carrierMessageId: '0B00000127FDBC64',
          reference: 'msg_2',
          status: 'failed',
          at: new Date('2026-11-25T13:10:29Z'),
          error: { code: 'carrier_6', message: 'Anti-spam rejection' },
        },
      },
    ]);
  });

  it('reads an expired receipt as a failure and an accepted or buffered one as nothing yet', async () => {
    for (const [status, count] of [
      ['expired', 1],
      ['accepted', 0],
      ['buffered', 0],
    ] as const) {
      await fake.sendSigned(`${catcher.url}${CALLBACK_PATH}`, fake.receipt('0B01', { status }), {
        form: 'form',
      });
      expect(provider.events(catcher.last(), new Date())).toHaveLength(count);
    }
  });

  it("takes an inbound message, its number in Tern's form", async () => {
    const inbound = fake.inbound({ from: '447700900001', to: '447700900000', text: 'STOP & go=now' });
    await fake.sendSigned(`${catcher.url}${CALLBACK_PATH}`, inbound, { form: 'form' });
    const call = catcher.last();
    expect(provider.verify(call, new Date())).toBe(true);
    expect(provider.events(call, new Date())).toEqual([
      {
        kind: 'reply',
        reply: {
          carrierMessageId: inbound.messageId,
          from: '447700900001',
          to: '447700900000',
          text: 'STOP & go=now',
          at: new Date('2026-11-25T13:12:00Z'),
        },
      },
    ]);
  });

  it("signs as Vonage's own library verifies, with each of the dashboard's methods", async () => {
    const algorithms: Record<VonageSignatureMethod, string> = {
      md5hash: 'MD5HASH',
      md5: 'MD5HMAC',
      sha1: 'SHA1HMAC',
      sha256: 'SHA256HMAC',
      sha512: 'SHA512HMAC',
    };
    const vonage = new SMS({ apiKey: API_KEY, apiSecret: API_SECRET });
    for (const method of Object.keys(algorithms) as VonageSignatureMethod[]) {
      const signer = await FakeVonage.start({
        apiKey: API_KEY,
        apiSecret: API_SECRET,
        signatureSecret: 's3',
        method,
      });
      const ours = createVonageProvider(
        settingsFor(signer, `signature_secret=s3&signature_method=${method}`),
      );
      const params = signer.receipt('0B02', { status: 'delivered', clientRef: 'a&b=c' });
      await signer.sendSigned(`${catcher.url}${CALLBACK_PATH}`, params, { form: 'json' });
      const call = catcher.last();
      const received = JSON.parse(call.rawBody.toString()) as Record<string, string>;
      const algorithm = algorithms[method] as Parameters<SMS['verifySignature']>[3];
      expect(vonage.verifySignature(received.sig!, received, 's3', algorithm)).toBe(true);
      expect(ours.verify(call, new Date())).toBe(true);
      await signer.close();
    }
  });

  it('refuses a callback unsigned, signed with another secret, altered, or outside five minutes', async () => {
    const url = `${catcher.url}${CALLBACK_PATH}`;
    const receipt = () => fake.receipt('0B03', { status: 'delivered' });
    await fake.sendSigned(url, receipt(), { form: 'query', unsigned: true });
    expect(provider.verify(catcher.last(), new Date())).toBe(false);
    await fake.sendSigned(url, receipt(), { form: 'query', secret: 'forged' });
    expect(provider.verify(catcher.last(), new Date())).toBe(false);
    await fake.sendSigned(url, receipt(), { form: 'json', timestamp: nowSeconds() - 301 });
    expect(provider.verify(catcher.last(), new Date())).toBe(false);
    await fake.sendSigned(url, receipt(), { form: 'json', timestamp: nowSeconds() + 301 });
    expect(provider.verify(catcher.last(), new Date())).toBe(false);

    await fake.sendSigned(url, receipt(), { form: 'form' });
    const genuine = catcher.last();
    expect(provider.verify(genuine, new Date())).toBe(true);
    const altered = genuine.rawBody.toString().replace('status=delivered', 'status=failed');
    expect(provider.verify({ ...genuine, rawBody: Buffer.from(altered) }, new Date())).toBe(false);
  });

  it('checks its signature against the documented example of the md5hash method', () => {
    // The string signed is "&a=1&b=x_y_z" followed by the secret.
    const params = { a: '1', b: 'x&y=z' };
    expect(signVonageParams(params, 'secret', 'md5hash')).toBe(
      createHash('md5').update('&a=1&b=x_y_zsecret').digest('hex'),
    );
  });
});
