import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../src/client/index.js';
import { ConfigError } from '../src/config/environment.js';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/lib/ids.js';
import {
  DestinationRefusedError,
  type Resolve,
  resolveDestination,
} from '../src/modules/webhooks/webhook-destination.js';
import { WebhookSecrets } from '../src/modules/webhooks/webhook-secrets.js';
import { WebhookSender } from '../src/modules/webhooks/webhook-sender.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';
import { type ReceivedCallback, WebhookReceiver } from './support/webhook-receiver.js';

const RETRY_BASE_MS = 100;
const TIMEOUT_MS = 300;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let t: TestTern;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [t, receiver] = await Promise.all([
    startTern({
      env: {
        SIMULATOR_DELAY_MS: '20',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        RECOVERY_INTERVAL_MS: '200',
        RECOVERY_AFTER_MS: '500',
      },
    }),
    WebhookReceiver.start(),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), receiver?.close()]);
});

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

let paths = 0;
/** A receiver path of the test's own. */
const newPath = () => `/hook-${++paths}`;

async function register(
  account: TestAccount,
  path: string,
  events = ['message.delivered', 'message.failed', 'message.replied'],
) {
  const response = await api(account, 'POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { webhook: string; secret: string; url: string; events: string[] };
}

async function send(account: TestAccount, to: string) {
  const response = await api(account, 'POST', '/v1/messages/send', { to, message: 'Hello' });
  expect(response.status).toBe(202);
  return response.body.message as string;
}

function callbacks(path: string, count: number, timeoutMs = 10_000): Promise<ReceivedCallback[]> {
  return waitFor(async () => (receiver.at(path).length >= count ? receiver.at(path) : null), timeoutMs);
}

/**
 * Waits until nothing more can reach a receiver for `account`: none of its messages still on
 * their way, every event of it dispatched, no delivery of it pending and no webhook job queued or
 * running. After that, a callback the test did not expect has had every chance to come: a
 * positive signal in place of a sleep that hopes the loops ran.
 */
async function quiescent(account: TestAccount, tern: TestTern = t): Promise<void> {
  const { prisma, queues } = tern.tern.deps;
  const accountId = account.account;
  await waitFor(async () => {
    const [travelling, undispatched, pending, jobs] = await Promise.all([
      prisma.message.count({ where: { accountId, status: { in: ['scheduled', 'queued', 'sent'] } } }),
      prisma.event.count({ where: { accountId, dispatchedAt: null } }),
      prisma.pendingWebhookDelivery.count({ where: { accountId } }),
      queues.webhookDelivery.getJobCounts('active', 'waiting', 'delayed', 'prioritized'),
    ]);
    const queued = Object.values(jobs).reduce((sum, count) => sum + count, 0);
    return travelling + undispatched + pending + queued === 0 ? true : null;
  }, 30_000);
}

function events(path: string) {
  return receiver.at(path).map((callback) => JSON.parse(callback.body) as Record<string, any>);
}

/** The receiver's check of docs/webhooks.md, written out independently of verifyWebhook. */
function signedWith(secret: string, callback: ReceivedCallback): boolean {
  const timestamp = String(callback.headers['x-service-timestamp']);
  const expected = `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${callback.body}`).digest('hex')}`;
  const given = String(callback.headers['x-service-signature']);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

function expectSigned(secret: string, callback: ReceivedCallback) {
  expect(signedWith(secret, callback)).toBe(true);
  const verified = verifyWebhook(secret, callback.headers, callback.body);
  expect(verified).toEqual({ ok: true, event: JSON.parse(callback.body) });
  expect(Math.abs(Number(callback.headers['x-service-timestamp']) - callback.at / 1000)).toBeLessThan(5);
  expect(callback.headers['content-type']).toBe('application/json');
}

/**
 * A dispatched `message.delivered` event and its pending delivery to `webhook`, due at
 * `nextAttemptAt`, as the dispatcher leaves them just before it enqueues: no job in Redis.
 */
async function plantDelivery(account: TestAccount, webhook: string, nextAttemptAt: Date) {
  const event = newId('evt');
  const body = JSON.stringify({
    id: event,
    event: 'message.delivered',
    created_at: new Date().toISOString(),
  });
  await t.tern.deps.prisma.event.create({
    data: {
      id: event,
      accountId: account.account,
      type: 'message.delivered',
      payload: {},
      body,
      dispatchedAt: new Date(),
    },
  });
  const delivery = `${event}-${webhook}`;
  await t.tern.deps.prisma.pendingWebhookDelivery.create({
    data: { id: delivery, accountId: account.account, eventId: event, webhookId: webhook, nextAttemptAt },
  });
  return { event, delivery, body };
}

async function deliveries(account: TestAccount, webhook: string, query = '') {
  const response = await api(account, 'GET', `/v1/webhooks/${webhook}/deliveries${query}`);
  expect(response.status).toBe(200);
  return response.body as { data: Record<string, any>[]; total: number; page: number; per_page: number };
}

describe('POST /v1/webhooks', () => {
  it("pings the URL with a signed webhook.ping, then answers 201 with the account's secret", async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const response = await api(alice, 'POST', '/v1/webhooks', {
      url: `${receiver.url}${path}`,
      events: ['message.delivered', 'message.failed', 'message.delivered'],
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      webhook: expect.stringMatching(/^whk_[0-9a-f]{32}$/),
      url: `${receiver.url}${path}`,
      events: ['message.delivered', 'message.failed'],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      created_at: expect.stringMatching(ISO),
      request: response.headers.get('x-request-id'),
    });
    const [ping] = receiver.at(path);
    expect(Object.keys(JSON.parse(ping!.body))).toEqual(['id', 'event', 'created_at']);
    expect(JSON.parse(ping!.body)).toEqual({
      id: expect.stringMatching(/^evt_/),
      event: 'webhook.ping',
      created_at: expect.stringMatching(ISO),
    });
    expectSigned(response.body.secret, ping!);
    expect(ping!.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(ping!.headers['x-service-timestamp']).toMatch(/^\d+$/);

    // One secret per account: a second registration answers the same one.
    const second = await register(alice, newPath(), ['message.replied']);
    expect(second.secret).toBe(response.body.secret);

    // Stored sealed, not as written.
    const account = await t.tern.deps.prisma.account.findUniqueOrThrow({ where: { id: alice.account } });
    expect(account.webhookSecretSealed).toMatch(/^v1\./);
    expect(account.webhookSecretSealed).not.toContain(response.body.secret.slice(6));

    const list = await api(alice, 'GET', '/v1/webhooks');
    expect(list.body).toMatchObject({ page: 1, per_page: 20, total: 2 });
    expect(list.body.data.map((w: { webhook: string }) => w.webhook)).toEqual([
      second.webhook,
      response.body.webhook,
    ]);
    expect(list.body.data[1]).toEqual({
      webhook: response.body.webhook,
      url: `${receiver.url}${path}`,
      events: ['message.delivered', 'message.failed'],
      created_at: response.body.created_at,
      updated_at: expect.stringMatching(ISO),
    });
    const one = await api(alice, 'GET', `/v1/webhooks/${response.body.webhook}`);
    expect(one.body).toEqual({ ...list.body.data[1], request: one.headers.get('x-request-id') });
  });

  it.each([
    [{ events: ['message.delivered'] }, 'url', 'required'],
    [{ url: 'not a url', events: ['message.delivered'] }, 'url', 'invalid_format'],
    [{ url: 'ftp://example.com/hook', events: ['message.delivered'] }, 'url', 'invalid_format'],
    [{ url: 'https://user:pw@example.com/hook', events: ['message.delivered'] }, 'url', 'invalid_format'],
    [{ url: 'https://example.com/hook' }, 'events', 'required'],
    [{ url: 'https://example.com/hook', events: [] }, 'events', 'too_short'],
    [{ url: 'https://example.com/hook', events: ['message.sent'] }, 'events.0', 'invalid_value'],
    [
      { url: 'https://example.com/hook', events: ['message.delivered', 'campaign.started'] },
      'events.1',
      'invalid_value',
    ],
    [
      { url: 'https://example.com/hook', events: ['message.delivered'], secret: 'mine' },
      'secret',
      'unknown_field',
    ],
  ])('refuses %j with 422 on %s (%s), without calling anyone', async (body, field, issue) => {
    const alice = await t.createAccount();
    const before = receiver.received.length;
    const response = await api(alice, 'POST', '/v1/webhooks', body);
    expect(response.status).toBe(422);
    expect(response.body.error.details).toContainEqual({ field, issue });
    expect(receiver.received.length).toBe(before);
  });

  it.each([
    ['answers the ping with 500', (path: string) => receiver.answerAt(path, () => ({ status: 500 }))],
    ['answers the ping with a redirect', (path: string) => receiver.answerAt(path, () => ({ status: 302 }))],
    [
      'answers the ping later than the timeout',
      (path: string) => receiver.answerAt(path, () => ({ status: 200, delayMs: TIMEOUT_MS + 300 })),
    ],
    ['does not listen', () => 'http://127.0.0.1:1/hook'],
  ])('refuses a URL that %s: 422 url unreachable, nothing stored', async (_case, urlFor) => {
    const alice = await t.createAccount();
    const response = await api(alice, 'POST', '/v1/webhooks', {
      url: urlFor(newPath()),
      events: ['message.delivered'],
    });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'url', issue: 'unreachable' }],
    });
    expect((await api(alice, 'GET', '/v1/webhooks')).body.total).toBe(0);
  });
});

describe('changing and deleting webhooks', () => {
  it('PATCH changes events without a ping, and pings a new URL', async () => {
    const alice = await t.createAccount();
    const first = newPath();
    const { webhook } = await register(alice, first, ['message.delivered']);
    const patched = await api(alice, 'PATCH', `/v1/webhooks/${webhook}`, {
      events: ['message.failed', 'message.replied'],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      webhook,
      url: `${receiver.url}${first}`,
      events: ['message.failed', 'message.replied'],
    });
    expect(receiver.at(first)).toHaveLength(1);

    const broken = newPath();
    receiver.on(broken, () => ({ status: 503 }));
    const refused = await api(alice, 'PATCH', `/v1/webhooks/${webhook}`, { url: `${receiver.url}${broken}` });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'url', issue: 'unreachable' }]);

    const second = newPath();
    const moved = await api(alice, 'PATCH', `/v1/webhooks/${webhook}`, { url: `${receiver.url}${second}` });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe(`${receiver.url}${second}`);
    expect(JSON.parse(receiver.at(second)[0]!.body).event).toBe('webhook.ping');

    const unchanged = await api(alice, 'PATCH', `/v1/webhooks/${webhook}`, {});
    expect(unchanged.body).toMatchObject({
      url: `${receiver.url}${second}`,
      events: ['message.failed', 'message.replied'],
    });
  });

  it('DELETE answers { webhook, deleted: true }; the webhook is gone and its pending retries stop', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook } = await register(alice, path, ['message.delivered']);
    receiver.on(path, async () => {
      const deleted = await api(alice, 'DELETE', `/v1/webhooks/${webhook}`);
      expect(deleted.body).toEqual({ webhook, deleted: true, request: deleted.headers.get('x-request-id') });
      return { status: 500 };
    });
    await send(alice, '5511990000101');
    await callbacks(path, 2);
    // The third attempt, had it still been due, would have been made by now.
    await quiescent(alice);
    expect(receiver.at(path)).toHaveLength(2);
    expect(await t.tern.deps.prisma.pendingWebhookDelivery.count({ where: { webhookId: webhook } })).toBe(0);
    for (const [method, route] of [
      ['GET', `/v1/webhooks/${webhook}`],
      ['PATCH', `/v1/webhooks/${webhook}`],
      ['DELETE', `/v1/webhooks/${webhook}`],
      ['GET', `/v1/webhooks/${webhook}/deliveries`],
      ['POST', `/v1/webhooks/${webhook}/replay`],
    ] as const) {
      const response = await api(
        alice,
        method,
        route,
        method === 'PATCH'
          ? { events: ['message.failed'] }
          : method === 'POST'
            ? { event: 'evt_x' }
            : undefined,
      );
      expect(response.status, `${method} ${route}`).toBe(404);
    }
    expect((await api(alice, 'GET', '/v1/webhooks')).body.total).toBe(0);
  });

  it("answers 404 for another account's webhook on every route, and changes nothing", async () => {
    const [alice, bob] = [await t.createAccount(), await t.createAccount()];
    const path = newPath();
    const { webhook } = await register(alice, path, ['message.delivered']);
    for (const [method, route, body] of [
      ['GET', `/v1/webhooks/${webhook}`, undefined],
      ['PATCH', `/v1/webhooks/${webhook}`, { events: ['message.failed'] }],
      ['DELETE', `/v1/webhooks/${webhook}`, undefined],
      ['GET', `/v1/webhooks/${webhook}/deliveries`, undefined],
      ['POST', `/v1/webhooks/${webhook}/replay`, { since: new Date(Date.now() - 60_000).toISOString() }],
    ] as const) {
      const response = await api(bob, method, route, body);
      expect(response.status, `${method} ${route}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await api(alice, 'GET', `/v1/webhooks/${webhook}`)).body.events).toEqual(['message.delivered']);
    expect((await api(bob, 'GET', '/v1/webhooks')).body.data).toEqual([]);
  });
});

describe('message events', () => {
  it('delivers message.failed, message.delivered and message.replied with their documented payloads, each signed', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { secret } = await register(alice, path);
    // The message events name the sender the message went from.
    await api(alice, 'PATCH', '/v1/settings', { default_sender: 'ALICECO' });
    const failing = await send(alice, '5511990000001');
    const replying = await send(alice, '5511990000002');
    await callbacks(path, 1 + 3);
    await quiescent(alice);
    const received = receiver.at(path).slice(1);
    expect(received).toHaveLength(3);
    for (const callback of received) expectSigned(secret, callback);

    const byKind = Object.fromEntries(
      received.map((callback) => [JSON.parse(callback.body).event, callback]),
    );
    expect(Object.keys(byKind).sort()).toEqual(['message.delivered', 'message.failed', 'message.replied']);
    const failed = JSON.parse(byKind['message.failed']!.body);
    expect(Object.keys(failed)).toEqual([
      'id',
      'event',
      'message',
      'to',
      'from',
      'status',
      'failed_at',
      'error',
      'campaign',
      'created_at',
    ]);
    expect(failed).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      event: 'message.failed',
      message: failing,
      to: '5511990000001',
      from: 'ALICECO',
      status: 'failed',
      failed_at: expect.stringMatching(ISO),
      error: { code: 'unreachable', message: expect.any(String) },
      campaign: null,
      created_at: expect.stringMatching(ISO),
    });
    expect(Object.keys(failed.error)).toEqual(['code', 'message']);
    const delivered = JSON.parse(byKind['message.delivered']!.body);
    expect(Object.keys(delivered)).toEqual([
      'id',
      'event',
      'message',
      'to',
      'from',
      'status',
      'delivered_at',
      'campaign',
      'created_at',
    ]);
    expect(delivered).toMatchObject({
      event: 'message.delivered',
      message: replying,
      to: '5511990000002',
      status: 'delivered',
      campaign: null,
    });
    const replied = JSON.parse(byKind['message.replied']!.body);
    expect(Object.keys(replied)).toEqual([
      'id',
      'event',
      'message',
      'inbound',
      'from',
      'text',
      'replied_at',
      'campaign',
      'created_at',
    ]);
    expect(replied).toMatchObject({
      event: 'message.replied',
      message: replying,
      inbound: expect.stringMatching(/^inb_/),
      from: '5511990000002',
      text: 'Thanks, got it',
      campaign: null,
    });
    expect(replied.replied_at).toMatch(ISO);
    expect(new Set(received.map((callback) => JSON.parse(callback.body).id)).size).toBe(3);

    // The message record agrees with the callbacks.
    const message = await api(alice, 'GET', `/v1/messages/${replying}`);
    expect(delivered.delivered_at).toBe(message.body.delivered_at);
  });

  it("sends each webhook only the kinds it subscribes to, and only its own account's events", async () => {
    const [alice, bob] = [await t.createAccount(), await t.createAccount()];
    const deliveredOnly = newPath();
    const failedOnly = newPath();
    const bobs = newPath();
    await register(alice, deliveredOnly, ['message.delivered']);
    await register(alice, failedOnly, ['message.failed']);
    await register(bob, bobs);
    await send(alice, '5511990000201');
    await send(alice, '5511990000001');
    await send(alice, '5511990000002');
    await callbacks(deliveredOnly, 1 + 2);
    await callbacks(failedOnly, 1 + 1);
    await Promise.all([quiescent(alice), quiescent(bob)]);
    expect(
      events(deliveredOnly)
        .slice(1)
        .map((event) => event.event),
    ).toEqual(['message.delivered', 'message.delivered']);
    expect(
      events(failedOnly)
        .slice(1)
        .map((event) => event.event),
    ).toEqual(['message.failed']);
    expect(events(bobs).map((event) => event.event)).toEqual(['webhook.ping']);
  });
});

describe('retries', () => {
  it('makes 5 attempts for a receiver that answers 500 four times, spaced by the backoff, with the same id and body', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook, secret } = await register(alice, path, ['message.delivered']);
    receiver.on(path, (n) => ({ status: n <= 4 ? 500 : 200 }));
    await send(alice, '5511990000301');
    const received = (await callbacks(path, 1 + 5)).slice(1);
    await quiescent(alice);
    expect(receiver.at(path)).toHaveLength(1 + 5);
    for (const callback of received) {
      expectSigned(secret, callback);
      expect(callback.body).toBe(received[0]!.body);
    }
    for (let n = 1; n < received.length; n += 1) {
      expect(received[n]!.at - received[n - 1]!.at, `retry ${n}`).toBeGreaterThanOrEqual(
        RETRY_BASE_MS * 2 ** (n - 1),
      );
    }
    // A fresh timestamp on each attempt: they span more than a second.
    expect(Number(received[4]!.headers['x-service-timestamp'])).toBeGreaterThan(
      Number(received[0]!.headers['x-service-timestamp']),
    );

    const log = await deliveries(alice, webhook);
    expect(log.total).toBe(5);
    const eventId = JSON.parse(received[0]!.body).id;
    expect(log.data.map((entry) => [entry.attempt, entry.status_code])).toEqual([
      [5, 200],
      [4, 500],
      [3, 500],
      [2, 500],
      [1, 500],
    ]);
    expect(log.data[0]).toEqual({
      delivery: expect.stringMatching(/^whd_/),
      event: eventId,
      event_type: 'message.delivered',
      attempt: 5,
      status_code: 200,
      duration_ms: expect.any(Number),
      error: null,
      created_at: expect.stringMatching(ISO),
    });
    expect(log.data[1]).toMatchObject({ attempt: 4, status_code: 500, error: 'HTTP 500' });
    const page = await deliveries(alice, webhook, '?per_page=2&page=2');
    expect(page.data.map((entry) => entry.attempt)).toEqual([3, 2]);
  });

  it('stops after exactly 5 attempts when the receiver always answers 500, and logs each', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook } = await register(alice, path, ['message.delivered']);
    receiver.on(path, () => ({ status: 500 }));
    await send(alice, '5511990000302');
    await callbacks(path, 1 + 5);
    await quiescent(alice);
    expect(receiver.at(path)).toHaveLength(1 + 5);
    const log = await deliveries(alice, webhook);
    expect(log.data.map((entry) => [entry.attempt, entry.status_code, entry.error])).toEqual(
      [5, 4, 3, 2, 1].map((n) => [n, 500, 'HTTP 500']),
    );
    expect(await t.tern.deps.prisma.pendingWebhookDelivery.count({ where: { webhookId: webhook } })).toBe(0);
  });

  it('counts an answer slower than the timeout as a failed attempt', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook } = await register(alice, path, ['message.delivered']);
    receiver.on(path, (n) => ({ status: 200, delayMs: n === 1 ? TIMEOUT_MS + 400 : 0 }));
    await send(alice, '5511990000303');
    await callbacks(path, 1 + 2);
    const log = await waitFor(async () => {
      const current = await deliveries(alice, webhook);
      return current.total === 2 ? current : null;
    });
    expect(log.data[1]).toMatchObject({
      attempt: 1,
      status_code: null,
      error: `no answer within ${TIMEOUT_MS} ms`,
    });
    expect(log.data[1]!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(log.data[0]).toMatchObject({ attempt: 2, status_code: 200, error: null });
  });

  it('signs the next attempt with a rotated secret', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { secret: old } = await register(alice, path, ['message.delivered']);
    let rotated = '';
    receiver.on(path, async (n) => {
      if (n === 1) {
        const response = await api(alice, 'POST', '/v1/webhooks/secret/rotate');
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
          request: response.headers.get('x-request-id'),
        });
        rotated = response.body.secret;
        return { status: 500 };
      }
      return { status: 200 };
    });
    await send(alice, '5511990000304');
    const [first, second] = (await callbacks(path, 1 + 2)).slice(1);
    expect(rotated).not.toBe(old);
    expect(signedWith(old, first!)).toBe(true);
    expect(signedWith(rotated, second!)).toBe(true);
    expect(signedWith(old, second!)).toBe(false);
    expect(verifyWebhook(old, second!.headers, second!.body)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(second!.body).toBe(first!.body);
  });

  it('delivers a planned delivery whose job never reached Redis, through the recovery sweep', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook, secret } = await register(alice, path, ['message.delivered']);
    const { body } = await plantDelivery(alice, webhook, new Date(Date.now() - 1_000));
    const [, callback] = await callbacks(path, 1 + 1);
    expect(callback!.body).toBe(body);
    expectSigned(secret, callback!);
  });

  it('makes an attempt once when two different jobs carry it (a recovered delivery whose first job still waits)', async () => {
    const alice = await t.createAccount();
    const path = newPath();
    const { webhook } = await register(alice, path, ['message.delivered']);
    const planted = await Promise.all([1, 2, 3].map(() => plantDelivery(alice, webhook, new Date())));
    const planned = planted.map(({ delivery }) => delivery);
    // Three jobs with different ids, each naming some of the same first attempts, one of them twice.
    await t.tern.services.webhookDeliveryJobs.enqueue([
      { deliveries: planned, attempt: 1 },
      { deliveries: [planned[1]!, planned[0]!], attempt: 1 },
      { deliveries: [planned[2]!, planned[2]!], attempt: 1 },
    ]);
    await callbacks(path, 1 + 3);
    await quiescent(alice);
    expect(receiver.at(path)).toHaveLength(1 + 3);
    const ids = events(path)
      .slice(1)
      .map((event) => event.id)
      .sort();
    expect(ids).toEqual(planted.map(({ event }) => event).sort());
    expect((await deliveries(alice, webhook)).total).toBe(3);
  });
});

describe('campaign events', () => {
  it("reach the campaign's URL, signed with a secret issued when first needed", async () => {
    const carol = await t.createAccount();
    const path = newPath();
    const template = (await api(carol, 'POST', '/v1/templates', { name: 'Hello', content: 'Hi {{name}}' }))
      .body.template;
    const campaign = (
      await api(carol, 'POST', '/v1/campaigns', {
        name: 'Spring',
        template,
        webhook: `${receiver.url}${path}`,
      })
    ).body.campaign;
    await api(carol, 'POST', `/v1/campaigns/${campaign}/contacts`, { phone: '5511940000002', name: 'Ana' });
    expect((await api(carol, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
    // started, finished, delivered, replied
    const received = await callbacks(path, 4).catch((error) => {
      throw new Error(
        `${error}: got ${receiver
          .at(path)
          .map((callback) => callback.body)
          .join('\n')}`,
      );
    });
    const kinds = received.map((callback) => JSON.parse(callback.body).event);
    expect(kinds.sort()).toEqual([
      'campaign.finished',
      'campaign.started',
      'message.delivered',
      'message.replied',
    ]);

    const { webhookSecretSealed } = await t.tern.deps.prisma.account.findUniqueOrThrow({
      where: { id: carol.account },
    });
    const secret = new WebhookSecrets(t.tern.deps.prisma, t.tern.deps.config.webhookSecretKey).unseal(
      carol.account,
      webhookSecretSealed!,
    );
    for (const callback of received) expectSigned(secret, callback);

    const started = events(path).find((event) => event.event === 'campaign.started')!;
    expect(Object.keys(started)).toEqual(['id', 'event', 'campaign', 'status', 'stats', 'created_at']);
    expect(started).toEqual({
      id: expect.stringMatching(/^evt_/),
      event: 'campaign.started',
      campaign,
      status: 'running',
      stats: {
        contacts: 1,
        queued: 0,
        sent: 0,
        delivered: 0,
        failed: 0,
        replied: 0,
        waiting: 0,
        opted_out: 0,
      },
      created_at: expect.stringMatching(ISO),
    });
    expect(Object.keys(started.stats)).toEqual([
      'contacts',
      'queued',
      'sent',
      'delivered',
      'failed',
      'replied',
      'waiting',
      'opted_out',
    ]);
    expect(events(path).find((event) => event.event === 'campaign.finished')).toMatchObject({
      campaign,
      status: 'finished',
    });
    expect(events(path).find((event) => event.event === 'message.delivered')).toMatchObject({
      campaign,
      to: '5511940000002',
    });
  });

  it('go to both a registered webhook and the campaign URL, which gets its message events whatever the registration subscribes to', async () => {
    const dave = await t.createAccount();
    const registered = newPath();
    const campaignPath = newPath();
    await register(dave, registered, ['message.replied']);
    const campaign = (
      await api(dave, 'POST', '/v1/campaigns', { name: 'Linked', webhook: `${receiver.url}${campaignPath}` })
    ).body.campaign;
    await api(dave, 'POST', '/v1/messages/send', { to: '5511990000001', message: 'Hi', campaign });
    await api(dave, 'POST', '/v1/messages/send', { to: '5511990000002', message: 'Hi', campaign });
    await callbacks(campaignPath, 3);
    await callbacks(registered, 1 + 1);
    await quiescent(dave);
    expect(
      events(campaignPath)
        .map((event) => event.event)
        .sort(),
    ).toEqual(['message.delivered', 'message.failed', 'message.replied']);
    expect(
      events(registered)
        .slice(1)
        .map((event) => event.event),
    ).toEqual(['message.replied']);
    const fromCampaign = receiver
      .at(campaignPath)
      .find((callback) => callback.body.includes('message.replied'))!;
    expect(receiver.at(registered)[1]!.body).toBe(fromCampaign.body);
  });
});

describe('POST /v1/webhooks/{webhook}/replay', () => {
  it('delivers past events again with their original id and body, newly signed, only the subscribed kinds', async () => {
    const erin = await t.createAccount();
    const path = newPath();
    const { webhook, secret } = await register(erin, path, ['message.delivered', 'message.failed']);
    const since = new Date().toISOString();
    await send(erin, '5511990000501');
    await send(erin, '5511990000001');
    await send(erin, '5511990000002');
    const originals = (await callbacks(path, 1 + 3)).slice(1);
    const other = await register(erin, newPath(), ['message.delivered']);

    const replay = await api(erin, 'POST', `/v1/webhooks/${other.webhook}/replay`, { since });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({
      webhook: other.webhook,
      events: 2,
      request: replay.headers.get('x-request-id'),
    });

    const again = await api(erin, 'POST', `/v1/webhooks/${webhook}/replay`, { since });
    expect(again.body.events).toBe(3);
    const replayed = (await callbacks(path, 1 + 6)).slice(4);
    expect(replayed.map((callback) => callback.body).sort()).toEqual(
      originals.map((callback) => callback.body).sort(),
    );
    for (const callback of replayed) expectSigned(secret, callback);

    const failed = originals.find((callback) => callback.body.includes('"message.failed"'))!;
    const one = await api(erin, 'POST', `/v1/webhooks/${webhook}/replay`, {
      event: JSON.parse(failed.body).id,
    });
    expect(one.body).toMatchObject({ webhook, events: 1 });
    const [last] = (await callbacks(path, 1 + 7)).slice(7);
    expect(last!.body).toBe(failed.body);

    // A kind the webhook does not subscribe to is not replayed to it.
    const delivered = originals.find((callback) => callback.body.includes('"message.delivered"'))!;
    const skipped = await api(erin, 'POST', `/v1/webhooks/${other.webhook}/replay`, {
      event: JSON.parse(failed.body).id,
    });
    expect(skipped.body.events).toBe(0);
    expect(
      (
        await api(erin, 'POST', `/v1/webhooks/${other.webhook}/replay`, {
          event: JSON.parse(delivered.body).id,
        })
      ).body.events,
    ).toBe(1);
  });

  it.each([
    [{}, 'since', 'required'],
    [{ since: 'yesterday' }, 'since', 'invalid_format'],
    [{ since: new Date(Date.now() - 8 * 24 * 3600_000).toISOString() }, 'since', 'invalid_value'],
    [{ since: new Date(Date.now() + 3600_000).toISOString() }, 'since', 'invalid_value'],
    [{ since: new Date().toISOString(), event: 'evt_x' }, 'event', 'invalid_value'],
    [{ until: new Date().toISOString() }, 'until', 'unknown_field'],
  ])('refuses %j with 422 on %s (%s)', async (body, field, issue) => {
    const frank = await t.createAccount();
    const { webhook } = await register(frank, newPath(), ['message.delivered']);
    const response = await api(frank, 'POST', `/v1/webhooks/${webhook}/replay`, body);
    expect(response.status).toBe(422);
    expect(response.body.error.details).toContainEqual({ field, issue });
  });

  it('answers 404 for an event of another account', async () => {
    const [gina, hank] = [await t.createAccount(), await t.createAccount()];
    const path = newPath();
    await register(hank, path, ['message.delivered']);
    await send(hank, '5511990000601');
    const [, callback] = await callbacks(path, 2);
    const { webhook } = await register(gina, newPath(), ['message.delivered']);
    const response = await api(gina, 'POST', `/v1/webhooks/${webhook}/replay`, {
      event: JSON.parse(callback!.body).id,
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('GraphQL', () => {
  it('registers, lists, reads the log, replays and rotates, with typed errors', async () => {
    const ivan = await t.createAccount();
    const path = newPath();
    const registered = await t.graphql(
      `mutation($input: RegisterWebhookInput!) { registerWebhook(input: $input) {
        __typename ... on WebhookRegistration { id url events secret createdAt } ... on ValidationError { details { field issue } } } }`,
      { input: { url: `${receiver.url}${path}`, events: ['message_delivered'] } },
      ivan.token,
    );
    const registration = registered.body.data.registerWebhook;
    expect(registration).toMatchObject({
      __typename: 'WebhookRegistration',
      url: `${receiver.url}${path}`,
      events: ['message.delivered'],
    });
    expectSigned(registration.secret, receiver.at(path)[0]!);

    const refused = await t.graphql(
      `mutation { registerWebhook(input: { url: "http://127.0.0.1:1/", events: [message_delivered] }) { __typename ... on ValidationError { code details { field issue } } } }`,
      {},
      ivan.token,
    );
    expect(refused.body.data.registerWebhook).toEqual({
      __typename: 'ValidationError',
      code: 'validation_error',
      details: [{ field: 'url', issue: 'unreachable' }],
    });

    receiver.on(path, (n) => ({ status: n === 1 ? 500 : 200 }));
    await send(ivan, '5511990000701');
    await callbacks(path, 1 + 2);
    const read = await waitFor(async () => {
      const response = await t.graphql(
        `query($id: ID!) { webhook(id: $id) { ... on Webhook { id events deliveries(perPage: 10) { attempt statusCode eventType error } } } }`,
        { id: registration.id },
        ivan.token,
      );
      return response.body.data.webhook.deliveries.length === 2 ? response.body.data.webhook : null;
    });
    expect(read.deliveries).toEqual([
      { attempt: 2, statusCode: 200, eventType: 'message.delivered', error: null },
      { attempt: 1, statusCode: 500, eventType: 'message.delivered', error: 'HTTP 500' },
    ]);

    const list = await t.graphql(
      '{ webhooks { ... on WebhookPage { total nodes { id } } } }',
      {},
      ivan.token,
    );
    expect(list.body.data.webhooks).toEqual({ total: 1, nodes: [{ id: registration.id }] });

    const replay = await t.graphql(
      `mutation($id: ID!, $since: String!) { replayWebhook(id: $id, input: { since: $since }) { __typename ... on WebhookReplay { webhookId events } } }`,
      { id: registration.id, since: new Date(Date.now() - 60_000).toISOString() },
      ivan.token,
    );
    expect(replay.body.data.replayWebhook).toEqual({
      __typename: 'WebhookReplay',
      webhookId: registration.id,
      events: 1,
    });

    const missing = await t.graphql(
      `{ webhook(id: "whk_missing") { __typename ... on NotFoundError { code } } }`,
      {},
      ivan.token,
    );
    expect(missing.body.data.webhook).toEqual({ __typename: 'NotFoundError', code: 'not_found' });

    const rotated = await t.graphql('mutation { rotateWebhookSecret { secret } }', {}, ivan.token);
    expect(rotated.body.data.rotateWebhookSecret.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.rotateWebhookSecret.secret).not.toBe(registration.secret);
  });
});

describe('verifyWebhook', () => {
  const secret = 'whsec_test';
  const body = '{"id":"evt_1","event":"message.delivered","created_at":"2026-11-21T10:00:00.000Z"}';
  const now = new Date('2026-11-21T10:00:00.000Z');
  const timestamp = Math.floor(now.getTime() / 1000);
  const sign = (ts: number, raw = body) =>
    `sha256=${createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex')}`;

  it('accepts a good callback from a plain object (any case), a Headers instance or a Buffer body', () => {
    const ok = { ok: true, event: JSON.parse(body) };
    expect(
      verifyWebhook(
        secret,
        { 'X-Service-Signature': sign(timestamp), 'X-Service-Timestamp': String(timestamp) },
        body,
        now,
      ),
    ).toEqual(ok);
    expect(
      verifyWebhook(
        secret,
        new Headers({ 'x-service-signature': sign(timestamp), 'x-service-timestamp': String(timestamp) }),
        Buffer.from(body),
        now,
      ),
    ).toEqual(ok);
    expect(
      verifyWebhook(
        secret,
        { 'x-service-signature': sign(timestamp - 299), 'x-service-timestamp': String(timestamp - 299) },
        body,
        now,
      ),
    ).toEqual(ok);
  });

  it.each([
    ['missing_headers', { 'x-service-timestamp': String(timestamp) }, body],
    ['missing_headers', { 'x-service-signature': sign(timestamp) }, body],
    ['invalid_timestamp', { 'x-service-signature': sign(timestamp), 'x-service-timestamp': 'soon' }, body],
    [
      'stale_timestamp',
      { 'x-service-signature': sign(timestamp - 301), 'x-service-timestamp': String(timestamp - 301) },
      body,
    ],
    [
      'stale_timestamp',
      { 'x-service-signature': sign(timestamp + 301), 'x-service-timestamp': String(timestamp + 301) },
      body,
    ],
    [
      'bad_signature',
      { 'x-service-signature': sign(timestamp), 'x-service-timestamp': String(timestamp) },
      body.replace('evt_1', 'evt_2'),
    ],
    [
      'bad_signature',
      { 'x-service-signature': sign(timestamp).slice(0, -1), 'x-service-timestamp': String(timestamp) },
      body,
    ],
    [
      'bad_signature',
      { 'x-service-signature': sign(timestamp + 1), 'x-service-timestamp': String(timestamp) },
      body,
    ],
  ])('refuses with %s', (reason, headers, raw) => {
    expect(verifyWebhook(secret, headers, raw, now)).toEqual({ ok: false, reason });
  });
});

describe('the signing secret at rest', () => {
  it('needs WEBHOOK_SECRET_KEY in production: 32 bytes, in hex or base64', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig(production)).toThrow(/WEBHOOK_SECRET_KEY is required in production/);
    expect(() => loadConfig({ ...production, WEBHOOK_SECRET_KEY: 'ab'.repeat(31) })).toThrow(ConfigError);
    const key = Buffer.alloc(32, 7);
    for (const written of [key.toString('hex'), key.toString('base64'), key.toString('base64url')]) {
      expect(loadConfig({ ...production, WEBHOOK_SECRET_KEY: written }).webhookSecretKey).toEqual(key);
    }
    expect(loadConfig({}).warnings).toContainEqual(expect.stringContaining('WEBHOOK_SECRET_KEY is not set'));
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10001' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  it('is sealed for its account: it does not open under another key or on another account', () => {
    const secrets = new WebhookSecrets(t.tern.deps.prisma, Buffer.alloc(32, 1));
    const sealed = secrets.seal('acc_1', 'whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(secrets.unseal('acc_1', sealed)).toBe('whsec_abc');
    expect(() => secrets.unseal('acc_2', sealed)).toThrow(/does not open/);
    expect(() => new WebhookSecrets(t.tern.deps.prisma, Buffer.alloc(32, 2)).unseal('acc_1', sealed)).toThrow(
      /does not open/,
    );
  });
});

describe('SSRF protection', () => {
  let guarded: TestTern;
  let account: TestAccount;

  beforeAll(async () => {
    guarded = await startTern({
      env: {
        SIMULATOR_DELAY_MS: '20',
        WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
    account = await guarded.createAccount();
  });
  afterAll(() => guarded?.stop());

  it.each([
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://[::1]/hook', 'loopback'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://100.100.100.200/', 'carrier-grade NAT'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[fd00:ec2::254]/hook', 'unique-local'],
    ['https://localhost/hook', 'loopback'],
    // IPv4-compatible IPv6 (::/96): some stacks route it to the IPv4 address it carries.
    ['https://[::127.0.0.1]/hook', 'IPv4-compatible'],
    ['https://[::169.254.169.254]/hook', 'IPv4-compatible'],
    ['https://[::10.0.0.1]/hook', 'IPv4-compatible'],
  ])('refuses to register %s (%s): 422 url unreachable, before connecting', async (url, kind) => {
    const response = await guarded.request('POST', '/v1/webhooks', {
      token: account.token,
      body: { url, events: ['message.delivered'] },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'url', issue: 'unreachable' }]);
    expect(response.body.error.message).toContain('destination refused');
    expect(response.body.error.message).toContain(kind);
  });

  it('refuses plain http unless WEBHOOK_ALLOW_INSECURE is set', async () => {
    const response = await guarded.request('POST', '/v1/webhooks', {
      token: account.token,
      body: { url: `${receiver.url}/x`, events: ['message.delivered'] },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'url', issue: 'invalid_format' }]);
  });

  it('logs a refused destination as one failed attempt with the reason, without retrying or crashing', async () => {
    const webhook = newId('whk');
    await guarded.tern.deps.prisma.webhook.create({
      data: {
        id: webhook,
        accountId: account.account,
        url: 'https://127.0.0.1:1/hook',
        events: ['message.delivered'],
      },
    });
    await guarded.request('POST', '/v1/messages/send', {
      token: account.token,
      body: { to: '5511990000801', message: 'Hi' },
    });
    const log = await waitFor(async () => {
      const response = await guarded.request('GET', `/v1/webhooks/${webhook}/deliveries`, {
        token: account.token,
      });
      // The page and its total are read by two statements: wait for the row itself.
      return response.body.data.length > 0 ? response.body : null;
    });
    await quiescent(account, guarded);
    const after = await guarded.request('GET', `/v1/webhooks/${webhook}/deliveries`, {
      token: account.token,
    });
    expect(after.body.total).toBe(1);
    expect(log.data[0]).toMatchObject({
      attempt: 1,
      status_code: null,
      error: expect.stringMatching(/^destination refused: 127\.0\.0\.1 is a loopback address/),
    });
    expect((await guarded.request('GET', '/health')).status).toBe(200);
  });

  describe('the resolved address decides, for names too', () => {
    const names: Record<string, string[]> = {
      'intranet.example': ['10.1.2.3'],
      'metadata.example': ['169.254.169.254'],
      'mapped.example': ['::ffff:169.254.169.254'],
      'cgnat.example': ['100.64.0.1'],
      'compatible.example': ['::7f00:1'],
      'outside-global.example': ['4000::1'],
      'rebind.example': ['93.184.216.34', '127.0.0.1'],
      'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
    };
    const resolve: Resolve = async (hostname) => names[hostname] ?? [];
    const policy = { allowPrivateNetworks: false, allowInsecure: false };

    it.each([
      'intranet.example',
      'metadata.example',
      'mapped.example',
      'cgnat.example',
      'compatible.example',
      'outside-global.example',
      'rebind.example',
    ])('refuses %s', async (host) => {
      await expect(resolveDestination(new URL(`https://${host}/hook`), policy, resolve)).rejects.toThrow(
        DestinationRefusedError,
      );
      const sender = new WebhookSender({ ...policy, timeoutMs: TIMEOUT_MS, resolve });
      const outcome = await sender.send(`https://${host}/hook`, '{}', 'whsec_x', new Date());
      expect(outcome).toMatchObject({
        ok: false,
        refused: true,
        statusCode: null,
        error: expect.stringMatching(
          new RegExp(
            `^destination refused: ${host.replace('.', '\\.')} resolves to a .* address, not a public one`,
          ),
        ),
      });
      expect(outcome.error).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    });

    it('answers the first address of a name whose every address is public, and allows all with WEBHOOK_ALLOW_PRIVATE_NETWORKS', async () => {
      expect(await resolveDestination(new URL('https://public.example/hook'), policy, resolve)).toBe(
        '93.184.216.34',
      );
      expect(
        await resolveDestination(
          new URL('https://rebind.example/hook'),
          { ...policy, allowPrivateNetworks: true },
          resolve,
        ),
      ).toBe('93.184.216.34');
      await expect(
        resolveDestination(new URL('http://public.example/hook'), policy, resolve),
      ).rejects.toThrow(/plain http/);
    });
  });
});
