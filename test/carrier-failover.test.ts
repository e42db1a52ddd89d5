import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// Failover between two loopback SMSCs: what moves to the next carrier, what does not, and an SMSC
// killed in the middle of a campaign.

const SMPP_ENV = {
  SMPP_RECONNECT_MS: '50',
  SMPP_RESPONSE_TIMEOUT_MS: '1000',
  SMPP_THROTTLE_BACKOFF_MS: '20',
  CLAIM_LEASE_MS: '4000',
};
const ESME_RINVDSTADR = 0x0000000b;

let a: LoopbackSmsc;
/** The submit_sm an SMSC has received, answered or not. */
const submitsTo = (smsc: LoopbackSmsc) =>
  smsc.received.filter((entry) => entry.command === 'submit_sm').length;
let b: LoopbackSmsc;
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  [a, b] = await Promise.all([LoopbackSmsc.start(), LoopbackSmsc.start()]);
  a.autoReceipt = 'tlv';
  b.autoReceipt = 'tlv';
  t = await startTern({ env: SMPP_ENV });
  alice = await t.createAccount();
  await t.tern.services.carrierCatalog.addCarrier('a', { url: a.url() });
  await t.tern.services.carrierCatalog.addCarrier('b', { url: b.url() });
  await waitFor(async () => (boundHere('a') && boundHere('b') ? true : null));
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([a, b].map((smsc) => smsc?.close()));
});

function boundHere(name: string): boolean {
  return t.tern.carriers!.health().some((entry) => entry.carrier === name && entry.state === 'bound');
}

async function route(prefix: string, choice: { carriers: string }) {
  const catalog = t.tern.services.carrierCatalog;
  const existing = (await catalog.settings()).routes.find(
    (entry) => entry.prefix === prefix && !entry.accountId,
  );
  if (existing) await catalog.updateRoute(existing.id, choice);
  else await catalog.addRoute(prefix, null, choice);
  await t.tern.services.carrierDirectory.refresh();
}

async function send(to: string) {
  const response = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: 'Failover' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

function settled(id: string, timeoutMs = 20_000) {
  return waitFor(async () => {
    const response = await t.request('GET', `/v1/messages/${id}`, { token: alice.token });
    return response.body.status === 'delivered' || response.body.status === 'failed' ? response.body : null;
  }, timeoutMs);
}

const acceptedFor = (smsc: LoopbackSmsc, to: string) =>
  smsc.accepted.filter((entry) => entry.submit.destination === to).length;

describe('failover', () => {
  it('opens as many sessions as binds when one process is the only worker, and closes the extra when binds go down', async () => {
    const catalog = t.tern.services.carrierCatalog;
    await catalog.updateCarrier('b', { binds: 2 });
    await waitFor(async () => (b.boundSessions.length === 2 ? true : null), 20_000);
    // The SMSC counts a session once it sent bind_resp; Tern once it has read it.
    const health = () => t.tern.carriers!.health().find((entry) => entry.carrier === 'b');
    await waitFor(async () => (health()?.bindsOpen === 2 ? true : null), 20_000);
    expect(health()).toMatchObject({ bindsOpen: 2, binds: 2 });
    await catalog.updateCarrier('b', { binds: 1 });
    await waitFor(async () => (b.boundSessions.length === 1 ? true : null), 20_000);
  });

  it('fails a message the carrier rejects for good without giving it to the next carrier', async () => {
    await route('4478', { carriers: 'a,b' });
    a.behaviour = (_n, submit) =>
      submit.destination === '447800900001' ? { status: ESME_RINVDSTADR } : 'ok';
    try {
      const failed = await settled(await send('447800900001'));
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'smpp_0x0000000b' } });
      expect(acceptedFor(b, '447800900001')).toBe(0);
    } finally {
      a.behaviour = () => 'ok';
    }
  });

  it('never gives a message whose hand-over outcome is unknown to a second carrier', async () => {
    await route('4478', { carriers: 'a,b' });
    let dropped = false;
    a.behaviour = (_n, submit) => {
      if (submit.destination !== '447800900002' || dropped) return 'ok';
      dropped = true;
      setTimeout(() => a.dropConnections(), 20);
      return 'silent';
    };
    try {
      const delivered = await settled(await send('447800900002'));
      expect(delivered).toMatchObject({ status: 'delivered' });
      expect(acceptedFor(b, '447800900002')).toBe(0);
      expect(acceptedFor(a, '447800900002')).toBe(1);
      // Pinned to its carrier while queued, it is counted under that carrier, as a count says.
      const byCarrier = await t.tern.deps.prisma.$queryRaw<
        { carrier: string; counted: number; rolled: number }[]
      >`
        SELECT k.carrier, (SELECT count(*)::int FROM messages m WHERE m.account_id = ${alice.account}
            AND COALESCE(m.carrier, '') = k.carrier) AS counted, sum(k.messages)::int AS rolled
        FROM message_stats k WHERE k.account_id = ${alice.account} GROUP BY k.carrier`;
      for (const row of byCarrier) expect(row.rolled, row.carrier).toBe(row.counted);
    } finally {
      a.behaviour = () => 'ok';
    }
  });

  it('goes around an SMSC killed in the middle of a 5,000-contact campaign: each message delivered once, none left queued, and the SMSC used again once back', async () => {
    await route('4479', { carriers: 'a,b' });
    // Submits the earlier tests left unanswered (silent on purpose): not this test's to wait for.
    const unansweredBefore = submitsTo(a) - a.accepted.length;
    const contacts = 5_000;
    const campaign = await campaignOf(contacts, '4479');
    const isCampaign = (entry: { submit: { destination: string } }) =>
      entry.submit.destination.startsWith('4479');
    expect((await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: alice.token })).status).toBe(
      200,
    );
    await waitFor(async () => (a.accepted.filter(isCampaign).length > contacts / 3 ? true : null), 60_000);
    // The SMSC stops answering, then goes away: what it took was answered well before it went.
    a.behaviour = () => 'silent';
    // Its answers read by Tern before it went, not only written: every submit it had taken
    // answered and its id recorded. A connection reset drops the answers its receiver has not
    // read yet, and a part whose answer was lost is submitted again (docs/carriers.md, Limits).
    const submitted = submitsTo(a);
    await waitFor(async () => {
      if (a.accepted.length + unansweredBefore < submitted) return null;
      const ids = a.accepted.map((entry) => entry.messageId);
      const recorded = await t.tern.deps.prisma.smppPart.count({
        where: { carrier: 'a', smscMessageId: { in: ids } },
      });
      return recorded === ids.length ? true : null;
    });
    await a.close();
    await waitFor(async () => (b.accepted.some(isCampaign) ? true : null));
    a.behaviour = () => 'ok';
    await a.restart();
    await waitFor(async () => {
      const open = await t.tern.deps.prisma.message.count({
        where: { campaignId: campaign, status: { in: ['queued', 'sent'] } },
      });
      const made = await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } });
      return made === contacts && open === 0 ? true : null;
    }, 90_000);
    expect(
      await t.tern.deps.prisma.message.count({ where: { campaignId: campaign, status: 'delivered' } }),
    ).toBe(contacts);
    const taken = new Map<string, number>();
    for (const entry of [...a.accepted, ...b.accepted].filter(isCampaign))
      taken.set(entry.submit.destination, (taken.get(entry.submit.destination) ?? 0) + 1);
    expect(taken.size).toBe(contacts);
    expect([...taken.values()].every((count) => count === 1)).toBe(true);
    await waitFor(async () => (boundHere('a') ? true : null), 20_000);
    const again = await settled(await send('447912345678'));
    expect(again).toMatchObject({ status: 'delivered', carrier: 'a' });
  }, 150_000);

  // Last: the throttling leaves the bind to a with a pace learned from it, which climbs back slowly.
  it('skips a carrier that keeps failing (its circuit opens) and takes it back by itself once it works again', async () => {
    await route('4476', { carriers: 'a,b' });
    const ESME_RTHROTTLED = 0x58;
    a.behaviour = () => ({ status: ESME_RTHROTTLED });
    const circuitOf = () => t.tern.carriers!.health().find((entry) => entry.carrier === 'a')?.circuit;
    try {
      const ids = await Promise.all(Array.from({ length: 8 }, (_, index) => send(`44760090000${index}`)));
      for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'delivered', carrier: 'b' });
      expect(circuitOf()).not.toBe('closed');
      const health = await t.healthDetail();
      expect(
        health.body.carriers.find((entry: { carrier: string }) => entry.carrier === 'a').circuit,
      ).not.toBe('closed');
    } finally {
      a.behaviour = () => 'ok';
    }
    await waitFor(async () => {
      const id = await send(`447600901${String(Date.now() % 1000).padStart(3, '0')}`);
      return (await settled(id)).carrier === 'a' ? true : null;
    }, 30_000);
    expect(circuitOf()).toBe('closed');
  }, 60_000);
});

/** A campaign of alice's with `count` contacts whose numbers start with `prefix`, ready to start. */
async function campaignOf(count: number, prefix: string): Promise<string> {
  const api = (method: string, path: string, body?: unknown) =>
    t.request(method, path, { token: alice.token, ...(body === undefined ? {} : { body }) });
  const template = (await api('POST', '/v1/templates', { name: 'Failover', content: 'Hello {{name}}' })).body
    .template;
  const campaign = (await api('POST', '/v1/campaigns', { name: 'Failover', template })).body
    .campaign as string;
  await t.tern.deps.prisma.contact.createMany({
    data: Array.from({ length: count }, (_, index) => ({
      id: newId('cnt'),
      accountId: alice.account,
      campaignId: campaign,
      phone: `${prefix}${String(index).padStart(8, '0')}`,
      name: `Contact ${index}`,
    })),
  });
  return campaign;
}
