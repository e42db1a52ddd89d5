import { WebHookEventType } from 'android-sms-gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAndroidGateway } from './support/fake-providers/android.js';
import { FakeInfobip, INFOBIP_STATUSES } from './support/fake-providers/infobip.js';
import { FakeVonage } from './support/fake-providers/vonage.js';
import { messageReader } from './support/message-reader.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// Vonage, Infobip and the Android app through Tern, end to end, each against its loopback fake:
// a message handed over, its report called back signed the provider's way (by the fakes, written
// apart from Tern's checks), callbacks that are not the provider's refused, and replies.

const PUBLIC_URL = 'https://tern.example.com/sms';
/** Further from Tern's clock than the five minutes a signed callback may be. */
const OUT_OF_WINDOW_SECONDS = 6 * 60;

let vonage: FakeVonage;
let infobip: FakeInfobip;
let phone: FakeAndroidGateway;
let t: TestTern;
let alice: TestAccount;
const { message, reaches } = messageReader(() => ({ tern: t, account: alice }));

/** A callback as each provider sends it; the status Tern answered. */
type Post = () => Promise<number>;

interface ProviderUnderTest {
  provider: string;
  carrier: string;
  /** The route prefix that goes to this carrier alone. */
  prefix: string;
  /** Checks what the provider received for message `id`, sent to `to` (E.164 with +). */
  expectHandedOver(id: string, to: string): Promise<void>;
  /** A genuine report of message `id`. */
  report(id: string, outcome: 'delivered' | 'failed'): Post;
  /** What a failed report makes the message's error. */
  failure: { code: string; message: string };
  /** Delivered reports of message `id` that are not the provider's, by what is wrong with them. */
  forgeries(id: string): [string, Post][];
  /** A reply from `from` (E.164 with +). */
  reply(from: string, text: string): Post;
}

const now = () => Math.floor(Date.now() / 1000);
/** Tern's address for a callback URL made under PUBLIC_URL (which a proxy would forward). */
const behindProxy = (url: string) => `${t.url}${url.slice(PUBLIC_URL.length)}`;

async function vonageMessageId(id: string): Promise<string> {
  const row = await t.tern.deps.prisma.message.findFirstOrThrow({ where: { id } });
  return row.carrierMessageId!;
}

/** The message Tern handed to Infobip that `matches`. */
function infobipSend(matches: (destination: { to: string; messageId: string }) => boolean) {
  return infobip
    .requestsTo('/sms/2/text/advanced')
    .map((request) => JSON.parse(request.body).messages[0])
    .find((sent) => matches(sent.destinations[0]));
}

const VONAGE_EVENTS = () => `${t.url}/carriers/vg/events`;

const PROVIDERS: ProviderUnderTest[] = [
  {
    provider: 'Vonage',
    carrier: 'vg',
    prefix: '4477',
    async expectHandedOver(id, to) {
      const form = vonage
        .requestsTo('/sms/json')
        .map((request) => new URLSearchParams(request.body))
        .find((sent) => sent.get('client-ref') === id);
      expect(form?.get('to')).toBe(to.slice(1));
      expect(form?.get('callback')).toBe(`${PUBLIC_URL}/carriers/vg/events`);
    },
    report: (id, outcome) => async () => {
      const receipt = vonage.receipt(await vonageMessageId(id), {
        status: outcome,
        clientRef: id,
        ...(outcome === 'failed' ? { errCode: '6' } : {}),
      });
      return vonage.sendSigned(VONAGE_EVENTS(), receipt, {
        form: outcome === 'delivered' ? 'query' : 'json',
      });
    },
    failure: { code: 'carrier_6', message: 'Anti-spam rejection' },
    forgeries: (id) => {
      const signedAs = (options: Parameters<FakeVonage['sendSigned']>[2]) => async () =>
        vonage.sendSigned(
          VONAGE_EVENTS(),
          vonage.receipt(await vonageMessageId(id), { status: 'delivered', clientRef: id }),
          options,
        );
      return [
        ['unsigned', signedAs({ form: 'query', unsigned: true })],
        ['signed with another secret', signedAs({ form: 'json', secret: 'not-the-signature-secret' })],
        ['signed out of the window', signedAs({ form: 'form', timestamp: now() - OUT_OF_WINDOW_SECONDS })],
      ];
    },
    reply: (from, text) => () =>
      vonage.sendSigned(VONAGE_EVENTS(), vonage.inbound({ from: from.slice(1), to: '447700900100', text }), {
        form: 'form',
      }),
  },
  {
    provider: 'Infobip',
    carrier: 'ib',
    prefix: '4478',
    async expectHandedOver(id, to) {
      const sent = infobipSend((destination) => destination.messageId === id);
      expect(sent.destinations[0].to).toBe(to.slice(1));
      expect(sent.callbackData).toBe(id);
      expect(sent.notifyUrl).toMatch(new RegExp(`^${PUBLIC_URL}/carriers/ib/events/[^/]+$`));
    },
    report: (id, outcome) => () =>
      infobip.sendReport(behindProxy(infobipSend((destination) => destination.messageId === id).notifyUrl), {
        messageId: id,
        callbackData: id,
        ...(outcome === 'delivered'
          ? { status: INFOBIP_STATUSES.deliveredToHandset }
          : {
              status: INFOBIP_STATUSES.undeliverable,
              error: {
                groupId: 1,
                groupName: 'HANDSET_ERRORS',
                id: 27,
                name: 'EC_ABSENT_SUBSCRIBER',
                description: 'Absent Subscriber',
                permanent: false,
              },
            }),
      }),
    failure: { code: 'carrier_EC_ABSENT_SUBSCRIBER', message: 'Absent Subscriber' },
    forgeries: (id) => {
      const postedTo = (path: string) => () =>
        infobip.sendReport(`${t.url}${path}`, {
          messageId: id,
          callbackData: id,
          status: INFOBIP_STATUSES.deliveredToHandset,
        });
      return [
        ['without the secret path', postedTo('/carriers/ib/events')],
        ['with another secret', postedTo('/carriers/ib/events/not-the-secret')],
      ];
    },
    // The number's forwarding is set to the carrier's callback URL, the one its reports come to.
    reply: (from, text) => () =>
      infobip.sendInbound(
        behindProxy(infobipSend((destination) => destination.to === from.slice(1)).notifyUrl),
        { from: from.slice(1), to: '447700900200', text },
      ),
  },
  {
    provider: 'the Android app',
    carrier: 'ph',
    prefix: '4479',
    async expectHandedOver(id, to) {
      const sent = phone
        .requestsTo('/message')
        .map((request) => JSON.parse(request.body))
        .find((message) => message.id === id);
      expect(sent.phoneNumbers).toEqual([to]);
      expect(sent.withDeliveryReport).toBe(true);
    },
    report: (id, outcome) => async () => {
      const at = new Date().toISOString();
      const [status] =
        outcome === 'delivered'
          ? await phone.sendEvent({
              event: WebHookEventType.SmsDelivered,
              payload: { messageId: id, deliveredAt: at },
            })
          : await phone.sendEvent({
              event: WebHookEventType.SmsFailed,
              payload: { messageId: id, failedAt: at, error: 'RESULT_ERROR_GENERIC_FAILURE' },
            });
      return status!;
    },
    failure: { code: 'carrier_failed', message: 'RESULT_ERROR_GENERIC_FAILURE' },
    forgeries: (id) => {
      const delivered = {
        event: WebHookEventType.SmsDelivered,
        payload: { messageId: id, deliveredAt: new Date().toISOString() },
      } as const;
      const signedAs = (options: Parameters<FakeAndroidGateway['sendEvent']>[1]) => async () =>
        (await phone.sendEvent(delivered, options))[0]!;
      return [
        ['unsigned', signedAs({ unsigned: true })],
        ['signed with another key', signedAs({ key: 'not-the-signing-key' })],
        ['signed out of the window', signedAs({ timestamp: now() - OUT_OF_WINDOW_SECONDS })],
      ];
    },
    reply: (from, text) => async () =>
      (
        await phone.sendEvent({
          event: WebHookEventType.SmsReceived,
          payload: { message: text, phoneNumber: from, receivedAt: new Date().toISOString() },
        })
      )[0]!,
  },
];

beforeAll(async () => {
  vonage = await FakeVonage.start({
    apiKey: 'vg-key',
    apiSecret: 'vg-secret',
    signatureSecret: 'vg-signing',
  });
  infobip = await FakeInfobip.start('ib-key');
  phone = await FakeAndroidGateway.start({ user: 'sms', password: 'ph-password' });
  phone.reach = (url) => behindProxy(url);
  t = await startTern({ env: { PUBLIC_URL } });
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  const host = (fake: { url: string }) => new URL(fake.url).host;
  await catalog.addCarrier('vg', {
    url: `vonage://vg-key:vg-secret@${host(vonage)}?tls=false&from=447700900100&signature_secret=vg-signing`,
  });
  await catalog.addCarrier('ib', { url: `infobip://ib-key@${host(infobip)}?tls=false&from=447700900200` });
  await catalog.addCarrier('ph', { url: `android://sms:ph-password@${host(phone)}?tls=false` });
  for (const provider of PROVIDERS)
    await catalog.addRoute(provider.prefix, null, { carriers: provider.carrier });
  await t.tern.services.carrierDirectory.refresh();
  await waitFor(async () =>
    PROVIDERS.every(({ carrier }) =>
      t.tern.carriers!.health().some((entry) => entry.carrier === carrier && entry.state === 'ready'),
    )
      ? true
      : null,
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([vonage?.close(), infobip?.close(), phone?.close()]);
});

let numbers = 0;
/** Sends to a fresh number under `prefix`; the message's id and the number. */
async function sendUnder(prefix: string): Promise<{ id: string; to: string }> {
  numbers += 1;
  const to = `+${prefix}${String(numbers).padStart(12 - prefix.length, '0')}`;
  const response = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: 'Hello' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return { id: response.body.message as string, to };
}

const storedCallbacks = () => t.tern.deps.prisma.carrierCallbackEvent.count();

describe('the Android carrier', () => {
  // First: the app's reports and replies in the tests below come through these webhooks.
  it('registers its webhooks on the phone at start, to its callback URL', async () => {
    const callbackUrl = `${PUBLIC_URL}/carriers/ph/events`;
    const registered = () => [...phone.webhooks.values()].sort((a, b) => a.event.localeCompare(b.event));
    await waitFor(async () => (phone.webhooks.size >= 3 ? true : null));
    expect(registered()).toEqual([
      { url: callbackUrl, event: 'sms:delivered' },
      { url: callbackUrl, event: 'sms:failed' },
      { url: callbackUrl, event: 'sms:received' },
    ]);
    // The key that signs them is one Tern set, not the one the app made up.
    expect(phone.requestsTo('/settings')).toHaveLength(1);
  });
});

for (const provider of PROVIDERS)
  describe(`${provider.provider} through Tern`, () => {
    it('hands a message to the provider, and a verified report delivers it', async () => {
      const { id, to } = await sendUnder(provider.prefix);
      expect(await reaches(id, 'sent')).toMatchObject({ carrier: provider.carrier });
      await provider.expectHandedOver(id, to);
      expect(await provider.report(id, 'delivered')()).toBe(200);
      expect(await reaches(id, 'delivered')).toMatchObject({ carrier: provider.carrier, error: null });
    });

    it("fails the message with the provider's error code when a report says it failed", async () => {
      const { id } = await sendUnder(provider.prefix);
      await reaches(id, 'sent');
      expect(await provider.report(id, 'failed')()).toBe(200);
      expect((await reaches(id, 'failed')).error).toEqual(provider.failure);
    });

    it('refuses callbacks that are not the provider’s with 401, changing nothing', async () => {
      const { id } = await sendUnder(provider.prefix);
      await reaches(id, 'sent');
      const before = await storedCallbacks();
      for (const [what, post] of provider.forgeries(id)) expect(await post(), what).toBe(401);
      expect(await storedCallbacks()).toBe(before);
      expect((await message(id)).status).toBe('sent');
      // The same report from the provider itself is taken: the refusals were for what they lacked.
      expect(await provider.report(id, 'delivered')()).toBe(200);
      await reaches(id, 'delivered');
    });

    it('changes nothing on a repeated report, nor on a contrary one after it', async () => {
      const { id } = await sendUnder(provider.prefix);
      await reaches(id, 'sent');
      expect(await provider.report(id, 'delivered')()).toBe(200);
      const { request: _first, ...delivered } = await reaches(id, 'delivered');
      expect(await provider.report(id, 'delivered')()).toBe(200);
      // Tern answers a callback once it has applied it (or found that it changes nothing).
      expect(await provider.report(id, 'failed')()).toBe(200);
      const { request: _again, ...now } = await message(id);
      expect(now).toEqual(delivered);
    });

    it('takes a STOP reply into the reply path and the opt-outs', async () => {
      const { id, to } = await sendUnder(provider.prefix);
      await reaches(id, 'sent');
      expect(await provider.reply(to, 'STOP')()).toBe(200);
      const replies = await waitFor(async () => {
        const response = await t.graphql(
          'query ($id: ID!) { message(id: $id) { ... on Message { replies { from text } } } }',
          { id },
          alice.token,
        );
        const found = response.body.data.message.replies;
        return found.length > 0 ? found : null;
      });
      expect(replies).toEqual([{ from: to.slice(1), text: 'STOP' }]);
      const optOuts = await t.request('GET', '/v1/opt-outs', { token: alice.token });
      expect(optOuts.body.data.map((entry: { phone: string }) => entry.phone)).toContain(to.slice(1));
    });
  });
