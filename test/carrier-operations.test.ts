import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliCommand } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// What the operator's carrier commands show and do to messages: `carriers list` gives each
// carrier's kind and its part of the last hour's messages; `carriers remove` of a carrier a
// message is still pinned to (an SMSC that takes the submit_sm and never answers leaves its
// outcome unknown, so no other carrier may take it) fails that message at once, as any failure does.

let smsc: LoopbackSmsc;
let receiver: WebhookReceiver;
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  [smsc, receiver] = await Promise.all([LoopbackSmsc.start(), WebhookReceiver.start()]);
  smsc.behaviour = () => 'silent';
  t = await startTern({
    env: {
      SMPP_RECONNECT_MS: '50',
      SMPP_RESPONSE_TIMEOUT_MS: '500',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
    },
  });
  alice = await t.createAccount();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([smsc?.close(), receiver?.close()]);
});

async function cli(...args: string[]): Promise<any[]> {
  const run = await runCliCommand(args, {
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
  });
  expect(run.code, run.stderr).toBe(0);
  // One JSON line per result; log lines may follow them.
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{"carrier"'))
    .map((line) => JSON.parse(line));
}

async function send(to: string): Promise<string> {
  const sent = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: 'Operator view' },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return sent.body.message as string;
}

describe('carriers list', () => {
  it("shows each carrier's kind and what it took of the last hour's messages: delivered and failed", async () => {
    // The simulator fails a number ending in 0001.
    const ids = await Promise.all(['33612340011', '33612340012', '33612340001'].map(send));
    await waitFor(async () => {
      const open = await t.tern.deps.prisma.message.count({
        where: { id: { in: ids }, status: { in: ['queued', 'sent'] } },
      });
      return open === 0 ? true : null;
    }, 20_000);
    const [listed] = await cli('carriers', 'list');
    expect(listed).toMatchObject({
      carrier: 'default',
      kind: 'simulator',
      binds: null,
      binds_open: null,
      last_hour: { hand_overs: 3, delivered: 2, failed: 1 },
    });
  });
});

describe('carriers remove', () => {
  it('fails the messages still pinned to the carrier with carrier_removed, with their message.failed callback', async () => {
    const catalog = t.tern.services.carrierCatalog;
    await catalog.addCarrier('mute', { url: smsc.url() });
    const route = await catalog.addRoute('44', null, { carriers: 'mute' });
    await t.tern.services.carrierDirectory.refresh();
    const hook = await t.request('POST', '/v1/webhooks', {
      token: alice.token,
      body: { url: `${receiver.url}/failed`, events: ['message.failed'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await waitFor(async () => (smsc.boundSessions.length > 0 ? true : null), 20_000);
    const sent = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '+447700900123', message: 'Never answered' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const id = sent.body.message as string;
    // Submitted and never answered: the message stays queued, pinned to that carrier.
    await waitFor(async () => {
      const row = await t.tern.deps.prisma.message.findUniqueOrThrow({ where: { id } });
      return row.status === 'queued' && row.carrier === 'mute' ? true : null;
    }, 20_000);
    expect(smsc.submitsReceived().length).toBeGreaterThanOrEqual(1);

    await catalog.updateRoute(route.id, { carriers: 'default' });
    const [mute] = (await cli('carriers', 'list')).filter((line) => line.carrier === 'mute');
    // Left with it, outcome unknown: counted as its hand-over, neither delivered nor failed.
    expect(mute).toMatchObject({ kind: 'smpp', last_hour: { hand_overs: 1, delivered: 0, failed: 0 } });
    expect(await cli('carriers', 'remove', 'mute')).toEqual([
      { carrier: 'mute', removed: true, messages_failed: 1 },
    ]);

    const message = await t.request('GET', `/v1/messages/${id}`, { token: alice.token });
    expect(message.body).toMatchObject({ status: 'failed', error: { code: 'carrier_removed' } });
    const [callback] = await waitFor(async () => {
      const received = receiver.at('/failed').filter((entry) => entry.body.includes(id));
      return received.length > 0 ? received : null;
    }, 20_000);
    expect(JSON.parse(callback!.body)).toMatchObject({
      event: 'message.failed',
      message: id,
      status: 'failed',
      error: { code: 'carrier_removed' },
    });
  }, 90_000);
});
