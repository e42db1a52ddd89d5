import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twilioSignature } from '../src/carriers/http/twilio.js';
import { REFUSING_ADDRESS } from './support/fake-providers/fake-server.js';
import {
  AUTH_TOKEN,
  FakeTwilio,
  incomingMessage,
  type SignedCallback,
  signed,
  statusCallback,
} from './support/fake-providers/fake-twilio.js';
import { messageReader } from './support/message-reader.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// A Twilio carrier against a loopback Twilio: sends, signed status callbacks and replies, and the
// outcome rules (refused for good, refused for now, no answer).

const PUBLIC_URL = 'https://tern.example.com/sms';

let fake: FakeTwilio;
let t: TestTern;
let alice: TestAccount;
const { message, reaches, handedOver } = messageReader(() => ({ tern: t, account: alice }));

beforeAll(async () => {
  fake = await FakeTwilio.start();
  t = await startTern({ env: { PUBLIC_URL, CLAIM_LEASE_MS: '4000' } });
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  await catalog.addCarrier('tw', { url: fake.url() });
  await catalog.addCarrier('tw-slow', { url: fake.url('from=+15550001111&timeout_ms=200') });
  await catalog.addCarrier('tw-down', {
    url: fake.url().replace(`127.0.0.1:${fake.port}`, REFUSING_ADDRESS),
  });
  await catalog.addCarrier('backup', { url: 'simulator://?delay_ms=10' });
  await catalog.addRoute('4477', null, { carriers: 'tw' });
  await catalog.addRoute('4478', null, { carriers: 'tw,backup' });
  await catalog.addRoute('4479', null, { carriers: 'tw-down,backup' });
  await catalog.addRoute('4476', null, { carriers: 'tw-slow,backup' });
  await t.tern.services.carrierDirectory.refresh();
  await waitFor(async () =>
    ['tw', 'tw-slow', 'tw-down', 'backup'].every((name) =>
      t.tern.carriers!.health().some((entry) => entry.carrier === name && entry.state === 'ready'),
    )
      ? true
      : null,
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

async function send(to: string): Promise<string> {
  const response = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: 'Hello over Twilio' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

/** Posts a callback to Tern as the provider would, at the URL's path under PUBLIC_URL. */
function post(callback: SignedCallback, headers: Record<string, string> = {}) {
  return t.request('POST', callback.url.slice(PUBLIC_URL.length), {
    rawBody: new URLSearchParams(callback.params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': callback.signature,
      ...headers,
    },
  });
}

const storedCallbacks = () => t.tern.deps.prisma.carrierCallbackEvent.count();

describe('a Twilio carrier', () => {
  it('signs as the twilio package does', () => {
    const params = { To: '+447700900001', Body: "l'été & 100% {ok}", MessageSid: 'SMx', b: 'z', a: 'y' };
    const url = `${PUBLIC_URL}/carriers/tw/events?ref=msg_1&x=%27`;
    expect(twilioSignature(AUTH_TOKEN, url, new URLSearchParams(params))).toBe(
      twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params),
    );
  });

  it('hands a message to the Messages resource, and a signed status callback delivers it', async () => {
    const id = await send('+447700900001');
    await reaches(id, 'sent');
    const sent = fake.message('+447700900001')!;
    expect(sent.form.get('From')).toBe('+15550001111');
    expect(sent.form.get('Body')).toBe('Hello over Twilio');
    expect(sent.form.get('StatusCallback')).toBe(`${PUBLIC_URL}/carriers/tw/events?ref=${id}`);
    expect(Number(sent.form.get('ValidityPeriod'))).toBeGreaterThan(0);
    expect((await message(id)).carrier).toBe('tw');

    expect((await post(statusCallback(sent, 'sent'))).status).toBe(200);
    expect((await message(id)).status).toBe('sent');
    const delivered = statusCallback(sent, 'delivered');
    // Twilio's own check agrees that this is what Twilio would send.
    expect(twilio.validateRequest(AUTH_TOKEN, delivered.signature, delivered.url, delivered.params)).toBe(
      true,
    );
    expect((await post(delivered)).status).toBe(200);
    expect((await reaches(id, 'delivered')).status).toBe('delivered');
  });

  it('refuses forged, unsigned and wrong-URL callbacks with 401, changing nothing', async () => {
    const id = await send('+447700900002');
    await reaches(id, 'sent');
    const sent = fake.message('+447700900002')!;
    const genuine = statusCallback(sent, 'delivered');
    const before = await storedCallbacks();
    const forged = {
      ...genuine,
      signature: twilio.getExpectedTwilioSignature('not-the-token', genuine.url, genuine.params),
    };
    const tampered = {
      ...genuine,
      params: { ...genuine.params, MessageStatus: 'failed', SmsStatus: 'failed' },
    };
    const otherUrl = signed(`${PUBLIC_URL}/carriers/tw/events?ref=msg_other`, genuine.params);
    const elsewhere = { ...otherUrl, url: genuine.url };
    for (const callback of [forged, tampered, elsewhere]) expect((await post(callback)).status).toBe(401);
    const unsigned = await t.request('POST', genuine.url.slice(PUBLIC_URL.length), {
      rawBody: new URLSearchParams(genuine.params).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.code).toBe('unauthorized');
    const unknown = await t.request('POST', '/carriers/nobody/events', { rawBody: 'a=b' });
    expect(unknown.status).toBe(401);
    expect(await storedCallbacks()).toBe(before);
    expect((await message(id)).status).toBe('sent');

    expect((await post(genuine)).status).toBe(200);
    const delivered = await reaches(id, 'delivered');
    // A repeated callback, and a later contrary one, change nothing.
    const after = await storedCallbacks();
    expect((await post(genuine)).status).toBe(200);
    expect(await storedCallbacks()).toBe(after);
    expect((await post(statusCallback(sent, 'undelivered', '30003'))).status).toBe(200);
    const { request: _first, ...unchanged } = delivered;
    const { request: _again, ...now } = await message(id);
    expect(now).toEqual(unchanged);
  });

  it('fails the message with the error code of an undelivered report', async () => {
    const id = await send('+447700900003');
    await reaches(id, 'sent');
    expect((await post(statusCallback(fake.message('+447700900003')!, 'undelivered', '30005'))).status).toBe(
      200,
    );
    expect(await reaches(id, 'failed')).toMatchObject({ error: { code: 'carrier_30005' } });
  });

  it('applies a report that arrives before the answer to the send, with or without its reference', async () => {
    const early: number[] = [];
    fake.onMessage = async (sent) => {
      const plain = new URL(sent.form.get('StatusCallback')!);
      plain.search = '';
      // Without our reference (a Messaging Service's own callback URL): it waits for the send's record.
      const callback =
        sent.form.get('To') === '+447700900004'
          ? statusCallback(sent, 'delivered')
          : signed(plain.toString(), statusCallback(sent, 'delivered').params);
      early.push((await post(callback)).status);
    };
    try {
      const [withReference, withoutReference] = [await send('+447700900004'), await send('+447700900005')];
      await reaches(withReference, 'delivered');
      await reaches(withoutReference, 'delivered');
      expect(early).toEqual([200, 200]);
    } finally {
      fake.onMessage = null;
    }
  });

  it('takes replies into the reply and STOP path', async () => {
    const id = await send('+447700900006');
    await reaches(id, 'sent');
    const reply = incomingMessage(
      `${PUBLIC_URL}/carriers/tw/events`,
      '+447700900006',
      '+15550001111',
      'STOP',
    );
    expect((await post(reply)).status).toBe(200);
    expect((await post(reply)).status).toBe(200);
    const optOuts = await waitFor(async () => {
      const response = await t.request('GET', '/v1/opt-outs', { token: alice.token });
      return response.body.data.length > 0 ? response.body.data : null;
    });
    expect(optOuts.map((entry: { phone: string }) => entry.phone.replace(/^\+/, ''))).toEqual([
      '447700900006',
    ]);
    const replies = await t.tern.deps.prisma.inboundMessage.findMany({ where: { messageId: id } });
    expect(replies.map((row) => row.text)).toEqual(['STOP']);
  });
});

describe('the outcome rules', () => {
  it('fails the message on a permanent 400 with carrier_<code>, without failover', async () => {
    fake.answerNext({
      kind: 'error',
      status: 400,
      code: 21211,
      message: "The 'To' number is not a valid phone number.",
    });
    const requests = fake.requests;
    const id = await send('+447800900001');
    const failed = await reaches(id, 'failed');
    // The backup would have delivered it: failed means it never went there.
    expect(fake.requests).toBe(requests + 1);
    expect(failed).toMatchObject({
      error: { code: 'carrier_21211', message: "The 'To' number is not a valid phone number." },
    });
  });

  it.each([
    ['429', { kind: 'error', status: 429, code: 20429, message: 'Too Many Requests' }],
    ['503', { kind: 'error', status: 503, code: 20503, message: 'Service Unavailable' }],
  ] as const)('gives the message to the next carrier on %s', async (status, behaviour) => {
    fake.answerNext(behaviour);
    const requests = fake.requests;
    const id = await send(`+4478009000${status.slice(0, 2)}`);
    expect((await handedOver(id)).carrier).toBe('backup');
    expect(fake.requests).toBe(requests + 1);
  });

  it('gives the message to the next carrier when the connection is refused', async () => {
    const id = await send('+447900900001');
    expect((await handedOver(id)).carrier).toBe('backup');
    const health = t.tern.carriers!.health().find((entry) => entry.carrier === 'tw-down')!;
    expect(health.lastError).toMatch(/ECONNREFUSED/);
  });

  it('keeps a message on its carrier when the request went out and no answer came', async () => {
    fake.answerNext({ kind: 'hang' });
    const requests = fake.requests;
    const id = await send('+447600900001');
    // The first request hangs past the carrier's timeout; the retry goes to the same carrier.
    await waitFor(async () => (fake.requests >= requests + 2 ? true : null), 30_000);
    const row = await t.tern.deps.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(row.carrier).toBe('tw-slow');
    await reaches(id, 'sent', 20_000);
    expect((await message(id)).carrier).toBe('tw-slow');
    const health = t.tern.carriers!.health().find((entry) => entry.carrier === 'tw-slow')!;
    expect(health.errors?.outcome_unknown).toBe(1);
  });
});
