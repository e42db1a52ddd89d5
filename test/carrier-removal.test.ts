import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliCommand } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// `carriers remove` of a carrier a message is still pinned to: an SMSC that takes the submit_sm
// and never answers leaves the message's outcome unknown, so no other carrier may take it; once
// the operator removes that carrier, the message fails at once, as any failure does.

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

async function cli(...args: string[]): Promise<any> {
  const run = await runCliCommand(args, {
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
  });
  expect(run.code, run.stderr).toBe(0);
  // Its result is the first line; log lines may follow it.
  return JSON.parse(run.stdout.split('\n')[0]!);
}

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
    expect(await cli('carriers', 'remove', 'mute')).toEqual({
      carrier: 'mute',
      removed: true,
      messages_failed: 1,
    });

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
