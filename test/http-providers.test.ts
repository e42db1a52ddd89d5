import { WebHookEventType } from 'android-sms-gateway';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeAndroidGateway } from './support/fake-providers/android.js';
import { FakeInfobip, INFOBIP_STATUSES } from './support/fake-providers/infobip.js';
import { FakeVonage } from './support/fake-providers/vonage.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

const PUBLIC_URL = 'https://tern.example.com/sms';
let vonage: FakeVonage;
let infobip: FakeInfobip;
let phone: FakeAndroidGateway;
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  vonage = await FakeVonage.start({ apiKey: 'abcd1234', apiSecret: 'abcdef0123456789', signatureSecret: 'sigsec' });
  infobip = await FakeInfobip.start('ibkey');
  phone = await FakeAndroidGateway.start({ user: 'sms', password: 'pw123456' });
  t = await startTern({ env: { PUBLIC_URL } });
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  const host = (u: string) => new URL(u).host;
  await catalog.addCarrier('vg', { url: `vonage://abcd1234:abcdef0123456789@${host(vonage.url)}?tls=false&from=ACME&signature_secret=sigsec` });
  await catalog.addCarrier('ib', { url: `infobip://ibkey@${host(infobip.url)}?tls=false&from=ACME` });
  await catalog.addCarrier('ph', { url: `android://sms:pw123456@${host(phone.url)}?tls=false` });
  await catalog.addRoute('4477', null, { carriers: 'vg' });
  await catalog.addRoute('4478', null, { carriers: 'ib' });
  await catalog.addRoute('4479', null, { carriers: 'ph' });
  await t.tern.services.carrierDirectory.refresh();
  await waitFor(async () =>
    ['vg', 'ib', 'ph'].every((name) => t.tern.carriers!.health().some((e) => e.carrier === name && e.state === 'ready')) ? true : null,
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await vonage?.close();
  await infobip?.close();
  await phone?.close();
});

async function send(to: string, message = 'Hello'): Promise<string> {
  const response = await t.request('POST', '/v1/messages/send', { token: alice.token, body: { to, message } });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}
const get = async (id: string) => (await t.request('GET', `/v1/messages/${id}`, { token: alice.token })).body;
const reaches = (id: string, status: string) => waitFor(async () => ((await get(id)).status === status ? get(id) : null), 10_000);
async function row(id: string) {
  return t.tern.deps.prisma.message.findFirstOrThrow({ where: { id } });
}

it('vonage end to end', async () => {
  const id = await send('+447700900001');
  await reaches(id, 'sent');
  const form = vonage.lastSend();
  expect(form.get('client-ref')).toBe(id);
  expect(form.get('callback')).toBe(`${PUBLIC_URL}/carriers/vg/events`);
  const { carrierMessageId } = await row(id);
  expect(await vonage.sendSigned(`${t.url}/carriers/vg/events`, vonage.receipt(carrierMessageId!, { status: 'delivered', clientRef: id }), { form: 'query' })).toBe(200);
  await reaches(id, 'delivered');
  expect(await vonage.sendSigned(`${t.url}/carriers/vg/events`, vonage.receipt('x', { status: 'delivered' }), { form: 'json', secret: 'bad' })).toBe(401);
  const reply = vonage.inbound({ from: '447700900001', to: 'ACME', text: 'STOP' });
  expect(await vonage.sendSigned(`${t.url}/carriers/vg/events`, reply, { form: 'form' })).toBe(200);
});

it('infobip end to end', async () => {
  const id = await send('+447800900001');
  await reaches(id, 'sent');
  const notifyUrl = infobip.lastSend().messages[0]!.notifyUrl as string;
  expect(notifyUrl.startsWith(`${PUBLIC_URL}/carriers/ib/events/`)).toBe(true);
  const path = notifyUrl.slice(PUBLIC_URL.length);
  expect(await infobip.sendReport(`${t.url}${path}`, { messageId: id, callbackData: id, status: INFOBIP_STATUSES.undeliverable })).toBe(200);
  const failed = await reaches(id, 'failed');
  console.log('infobip failed', JSON.stringify(failed.error));
  expect(await infobip.sendReport(`${t.url}/carriers/ib/events/wrong`, { messageId: id, status: INFOBIP_STATUSES.deliveredToHandset })).toBe(401);
});

it('android end to end', async () => {
  await waitFor(async () => (phone.webhooks.size === 3 ? true : null));
  console.log('webhooks', JSON.stringify([...phone.webhooks.values()]));
  const id = await send('+447900900001');
  await reaches(id, 'sent');
  expect(phone.lastSend().id).toBe(id);
  for (const hook of phone.webhooks.values()) hook.url = hook.url.replace(PUBLIC_URL, t.url);
  expect(await phone.sendEvent({ event: WebHookEventType.SmsDelivered, payload: { messageId: id, deliveredAt: new Date().toISOString() } })).toEqual([200]);
  await reaches(id, 'delivered');
  expect(await phone.sendEvent({ event: WebHookEventType.SmsDelivered, payload: { messageId: id, deliveredAt: new Date().toISOString() } }, { key: 'nope' })).toEqual([401]);
});
