import { SMSStatus } from '@vonage/sms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAndroidGateway } from './support/fake-providers/android.js';
import { type FakeProviderServer, REFUSING_ADDRESS } from './support/fake-providers/fake-server.js';
import { FakeInfobip, INFOBIP_STATUSES } from './support/fake-providers/infobip.js';
import { FakeVonage } from './support/fake-providers/vonage.js';
import { messageReader } from './support/message-reader.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// The outcome rules of a hand-over for Vonage, Infobip and the Android app, each on its loopback
// fake: refused for good fails the message; refused for now (429, 503, a refused connection) gives
// it to the route's next carrier; no answer to a request that went out keeps it on its carrier.
// Each provider has three carriers on the same fake (one answers late after 200 ms, one on a
// closed port), each first on a route of its own with the simulator second.

const PUBLIC_URL = 'https://tern.example.com/sms';

interface ProviderUnderTest {
  provider: string;
  carrier: string;
  /** Route prefixes are prefix + 0 (the carrier), + 1 (on a closed port), + 2 (a short timeout). */
  prefix: string;
  /** Where the provider takes a message. */
  sendPath: string;
  fake(): FakeProviderServer & { refuseForNowNext(status: 429 | 503): void };
  /** The carrier's URL for a provider at `host` (host:port), with extra query options. */
  carrierUrl(host: string, options?: string): string;
  /** Makes the provider refuse the next message for good, as it documents it; its error, as Tern shows it. */
  refuseForGoodNext(): { code: string; message: string };
}

let vonage: FakeVonage;
let infobip: FakeInfobip;
let phone: FakeAndroidGateway;

const PROVIDERS: ProviderUnderTest[] = [
  {
    provider: 'Vonage',
    carrier: 'vg',
    prefix: '4474',
    sendPath: '/sms/json',
    fake: () => vonage,
    carrierUrl: (host, options = '') =>
      `vonage://vg-key:vg-secret@${host}?tls=false&from=ACME&signature_secret=vg-signing${options}`,
    refuseForGoodNext() {
      vonage.refuseNext(SMSStatus.INVALID_SENDER_ADDRESS, 'Invalid Sender Address');
      return { code: 'carrier_15', message: 'Invalid Sender Address' };
    },
  },
  {
    provider: 'Infobip',
    carrier: 'ib',
    prefix: '4475',
    sendPath: '/sms/2/text/advanced',
    fake: () => infobip,
    carrierUrl: (host, options = '') => `infobip://ib-key@${host}?tls=false&from=ACME${options}`,
    refuseForGoodNext() {
      infobip.statusNext(INFOBIP_STATUSES.rejectedDestination);
      return { code: 'carrier_REJECTED_DESTINATION', message: 'Invalid destination address.' };
    },
  },
  {
    provider: 'the Android app',
    carrier: 'ph',
    prefix: '4476',
    sendPath: '/message',
    fake: () => phone,
    carrierUrl: (host, options = '') => `android://sms:ph-password@${host}?tls=false${options}`,
    refuseForGoodNext() {
      phone.answerNext({ status: 400, body: { message: 'Invalid phone number' } });
      return { code: 'carrier_400', message: 'Invalid phone number' };
    },
  },
];

let t: TestTern;
let alice: TestAccount;
const { reaches, handedOver } = messageReader(() => ({ tern: t, account: alice }));

beforeAll(async () => {
  vonage = await FakeVonage.start({
    apiKey: 'vg-key',
    apiSecret: 'vg-secret',
    signatureSecret: 'vg-signing',
  });
  infobip = await FakeInfobip.start('ib-key');
  phone = await FakeAndroidGateway.start({ user: 'sms', password: 'ph-password' });
  t = await startTern({ env: { PUBLIC_URL, CLAIM_LEASE_MS: '4000' } });
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  await catalog.addCarrier('backup', { url: 'simulator://?delay_ms=10' });
  for (const provider of PROVIDERS) {
    const host = new URL(provider.fake().url).host;
    await catalog.addCarrier(provider.carrier, { url: provider.carrierUrl(host) });
    await catalog.addCarrier(`${provider.carrier}-down`, { url: provider.carrierUrl(REFUSING_ADDRESS) });
    await catalog.addCarrier(`${provider.carrier}-slow`, {
      url: provider.carrierUrl(host, '&timeout_ms=200'),
    });
    await catalog.addRoute(`${provider.prefix}0`, null, { carriers: `${provider.carrier},backup` });
    await catalog.addRoute(`${provider.prefix}1`, null, { carriers: `${provider.carrier}-down,backup` });
    await catalog.addRoute(`${provider.prefix}2`, null, { carriers: `${provider.carrier}-slow,backup` });
  }
  await t.tern.services.carrierDirectory.refresh();
  const names = [
    'backup',
    ...PROVIDERS.flatMap(({ carrier }) => [carrier, `${carrier}-down`, `${carrier}-slow`]),
  ];
  await waitFor(async () =>
    names.every((name) =>
      t.tern.carriers!.health().some((entry) => entry.carrier === name && entry.state === 'ready'),
    )
      ? true
      : null,
  );
  // The two phone carriers that reach the fake have registered their three webhooks each: the
  // answers a test queues go to its own requests, not to these.
  await waitFor(async () => (phone.webhooks.size === 6 ? true : null));
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([vonage?.close(), infobip?.close(), phone?.close()]);
});

let sent = 0;
/** Sends to a fresh number under the route `prefix`, answering the message's id. */
async function sendUnder(prefix: string): Promise<string> {
  sent += 1;
  const response = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to: `+${prefix}${String(sent).padStart(12 - prefix.length, '0')}`, message: 'Hello' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

const healthOf = (carrier: string) => t.tern.carriers!.health().find((entry) => entry.carrier === carrier)!;

for (const provider of PROVIDERS)
  describe(`the outcome rules for ${provider.provider}`, () => {
    const sends = () => provider.fake().requestsTo(provider.sendPath).length;

    it('fails the message with carrier_<code> when the provider refuses it for good, without the next carrier', async () => {
      const error = provider.refuseForGoodNext();
      const before = sends();
      const failed = await reaches(await sendUnder(`${provider.prefix}0`), 'failed');
      expect(failed.error).toEqual(error);
      // The simulator second on the route would have taken it: failed means it never went there.
      expect(failed.carrier).not.toBe('backup');
      expect(sends()).toBe(before + 1);
    });

    it.each([429, 503] as const)(
      'gives the message to the next carrier when the provider answers %i',
      async (status) => {
        provider.fake().refuseForNowNext(status);
        const before = sends();
        const id = await sendUnder(`${provider.prefix}0`);
        expect((await handedOver(id)).carrier).toBe('backup');
        expect(sends()).toBe(before + 1);
        expect(healthOf(provider.carrier).lastError).toContain(`HTTP ${status}`);
      },
    );

    it('gives the message to the next carrier when the connection is refused', async () => {
      const id = await sendUnder(`${provider.prefix}1`);
      expect((await handedOver(id)).carrier).toBe('backup');
      expect(healthOf(`${provider.carrier}-down`).lastError).toMatch(/ECONNREFUSED/);
    });

    it('keeps the message on its carrier when the request went out and no answer came', async () => {
      provider.fake().hangNext();
      const before = sends();
      const id = await sendUnder(`${provider.prefix}2`);
      // The first request outlasts the carrier's 200 ms; the message is tried again on that carrier.
      await waitFor(async () => (sends() >= before + 2 ? true : null), 30_000);
      const taken = await reaches(id, 'sent', 20_000);
      expect(taken.carrier).toBe(`${provider.carrier}-slow`);
      expect(healthOf(`${provider.carrier}-slow`).errors?.outcome_unknown).toBe(1);
    });
  });
