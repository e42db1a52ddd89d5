import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { FakeTwilio } from './support/fake-providers/fake-twilio.js';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// The worked example of docs/carriers.md: a UK route on an SMSC (one bind) that fails over to
// Twilio. The SMSC is killed in the middle of a campaign; every message must still be delivered
// exactly once, through one or the other, and the SMSC must be used again once it is back. The
// loopback Twilio calls each message's StatusCallback itself, signed, as Twilio does.

const PUBLIC_URL = 'https://tern.example.com/sms';
const ENV = {
  PUBLIC_URL,
  SMPP_RECONNECT_MS: '50',
  SMPP_RESPONSE_TIMEOUT_MS: '1000',
  SMPP_THROTTLE_BACKOFF_MS: '20',
  // Twilio's answer may take up to half the lease (30 s here, with the carrier's timeout_ms).
  // Tern, the fakes and the campaign share this process: on a machine loaded by other work its
  // loop stalled past the default 10 s answer timeout, and Tern sent those messages to Twilio
  // again (an unknown outcome stays with the carrier, and Twilio does not deduplicate). No
  // process dies in this test, so the lease bounds nothing else.
  CLAIM_LEASE_MS: '60000',
};
const CONTACTS = 2_000;
/** The campaign's numbers: UK mobiles, under the route's prefix 44. */
const CAMPAIGN_PREFIX = '4479';

let smsc: LoopbackSmsc;
let twilio: FakeTwilio;
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  smsc = await LoopbackSmsc.start();
  smsc.autoReceipt = 'tlv';
  twilio = await FakeTwilio.start();
  t = await startTern({ env: ENV });
  // PUBLIC_URL stands for a proxy in front of Tern: Twilio calls it, and it forwards to Tern.
  twilio.statusCallbacks = { reach: (url) => `${t.url}${url.slice(PUBLIC_URL.length)}` };
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  await catalog.addCarrier('smpp-primary', { url: smsc.url(), binds: 1 });
  await catalog.addCarrier('twilio-backup', { url: twilio.url('from=+447700900000&timeout_ms=30000') });
  await catalog.addRoute('44', null, { carriers: 'smpp-primary,twilio-backup' });
  await t.tern.services.carrierDirectory.refresh();
  await waitFor(async () => (healthOf('smpp-primary')?.state === 'bound' ? true : null));
  await waitFor(async () => (healthOf('twilio-backup')?.state === 'ready' ? true : null));
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await twilio?.close();
  await smsc?.close();
});

const healthOf = (carrier: string) => t.tern.carriers!.health().find((entry) => entry.carrier === carrier);

/** The submit_sm the SMSC has received, answered or not. */
const submitsReceived = () => smsc.received.filter((entry) => entry.command === 'submit_sm').length;

describe('a UK route on an SMSC failing over to Twilio', () => {
  it('delivers every message of a 2,000-contact campaign exactly once through one or the other when the SMSC is killed in the middle, and goes back to the SMSC once it returns', async () => {
    const campaign = await campaignOf(CONTACTS);
    const isCampaign = (to: string) => to.startsWith(CAMPAIGN_PREFIX);
    const takenBySmsc = () => smsc.accepted.map((entry) => entry.submit.destination).filter(isCampaign);
    const takenByTwilio = () =>
      twilio.messages.map((message) => message.form.get('To')!.replace(/^\+/, '')).filter(isCampaign);
    const started = await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: alice.token });
    expect(started.status).toBe(200);
    await waitFor(async () => (takenBySmsc().length > CONTACTS / 3 ? true : null), 60_000);

    // The SMSC stops answering, then goes away once Tern has read the answer to every submit it
    // took: one whose answer was lost in the close would be sent again, as SMPP does (a duplicate
    // of the SMSC's making, not this test's subject). The unanswered ones stay with the SMSC
    // (outcome unknown) until it is back.
    smsc.behaviour = () => 'silent';
    const submitted = submitsReceived();
    await waitFor(async () => (smsc.accepted.length >= submitted ? true : null));
    const answered = smsc.accepted.map((entry) => entry.messageId);
    await waitFor(async () =>
      (await t.tern.deps.prisma.message.count({ where: { carrierMessageId: { in: answered } } })) ===
      answered.length
        ? true
        : null,
    );
    await smsc.close();
    // Down long enough for Twilio to take a share of its own, with its callbacks.
    await waitFor(async () => (takenByTwilio().length >= CONTACTS / 10 ? true : null), 30_000);
    smsc.behaviour = () => 'ok';
    await smsc.restart();

    await waitFor(async () => {
      const made = await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } });
      const open = await t.tern.deps.prisma.message.count({
        where: { campaignId: campaign, status: { in: ['queued', 'sent'] } },
      });
      return made === CONTACTS && open === 0 ? true : null;
    }, 120_000);
    await twilio.callbacksAnswered();

    const campaignCounts = await t.request('GET', `/v1/campaigns/${campaign}`, { token: alice.token });
    expect(campaignCounts.body.stats).toMatchObject({
      contacts: CONTACTS,
      delivered: CONTACTS,
      failed: 0,
      queued: 0,
      sent: 0,
    });
    const taken = new Map<string, number>();
    for (const to of [...takenBySmsc(), ...takenByTwilio()]) taken.set(to, (taken.get(to) ?? 0) + 1);
    expect(taken.size).toBe(CONTACTS);
    expect([...taken.entries()].filter(([, times]) => times !== 1)).toEqual([]);
    // Each message says which of the two took it.
    const byCarrier = await t.tern.deps.prisma.message.groupBy({
      by: ['carrier'],
      where: { campaignId: campaign },
      _count: true,
    });
    expect(Object.fromEntries(byCarrier.map((group) => [group.carrier, group._count]))).toEqual({
      'smpp-primary': takenBySmsc().length,
      'twilio-backup': takenByTwilio().length,
    });
    // Twilio's callbacks were each verified and taken; they are what delivered its share.
    expect(twilio.callbackAnswers).toEqual(Array(2 * takenByTwilio().length).fill(200));

    await waitFor(async () => (healthOf('smpp-primary')?.state === 'bound' ? true : null), 20_000);
    const twilioBefore = twilio.messages.length;
    const response = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '+447700900123', message: 'Back on the SMSC' },
    });
    expect(response.status).toBe(202);
    const again = await waitFor(async () => {
      const body = (await t.request('GET', `/v1/messages/${response.body.message}`, { token: alice.token }))
        .body;
      return body.status === 'delivered' ? body : null;
    }, 20_000);
    expect(again.carrier).toBe('smpp-primary');
    expect(twilio.messages.length).toBe(twilioBefore);
  }, 180_000);
});

/** A campaign of alice's with `count` UK contacts, ready to start. */
async function campaignOf(count: number): Promise<string> {
  const api = (method: string, path: string, body: unknown) =>
    t.request(method, path, { token: alice.token, body });
  const template = (await api('POST', '/v1/templates', { name: 'Failover', content: 'Hello {{name}}' })).body
    .template;
  const campaign = (await api('POST', '/v1/campaigns', { name: 'Failover', template })).body
    .campaign as string;
  await t.tern.deps.prisma.contact.createMany({
    data: Array.from({ length: count }, (_, index) => ({
      id: newId('cnt'),
      accountId: alice.account,
      campaignId: campaign,
      phone: `${CAMPAIGN_PREFIX}${String(index).padStart(8, '0')}`,
      name: `Contact ${index}`,
    })),
  });
  return campaign;
}
