import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/** Short timings, so that reconnects and retries happen within a test. */
const SMPP_ENV = {
  SMPP_RECONNECT_MS: '50',
  SMPP_RESPONSE_TIMEOUT_MS: '1000',
  SMPP_THROTTLE_BACKOFF_MS: '20',
  SMPP_SYSTEM_TYPE: 'tern',
};
/** The bind_transceiver PDUs an SMSC has received, refused or not. */
const binds = (smsc: LoopbackSmsc) =>
  smsc.received.filter((entry) => entry.command === 'bind_transceiver').length;
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_RETRY_BASE_MS: '100',
};

let smsc: LoopbackSmsc;
let t: TestTern;
let receiver: WebhookReceiver;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  [smsc, receiver] = await Promise.all([LoopbackSmsc.start('tern', 'secret'), WebhookReceiver.start()]);
  smsc.autoReceipt = 'text';
  t = await startTern({ env: { CARRIER: 'smpp', SMPP_URL: smsc.url(), ...SMPP_ENV, ...WEBHOOK_ENV } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  const registered = await api(alice, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/alice`,
    events: ['message.delivered', 'message.failed', 'message.replied'],
  });
  expect(registered.status).toBe(201);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([smsc?.close(), receiver?.close()]);
});

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

async function send(account: TestAccount, to: string, message = 'Hello from Tern') {
  const response = await api(account, 'POST', '/v1/messages/send', { to, message });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

function statusOf(account: TestAccount, id: string, status: string, timeoutMs = 10_000) {
  return waitFor(async () => {
    const response = await api(account, 'GET', `/v1/messages/${id}`);
    return response.body.status === status ? response.body : null;
  }, timeoutMs);
}

/** The webhook event of `type` for one message, once it has arrived. */
function eventFor(path: string, type: string, message: string) {
  return waitFor(async () =>
    receiver
      .at(path)
      .map((callback) => JSON.parse(callback.body))
      .find((event) => event.event === type && event.message === message),
  );
}

const GRAPHQL_SEND = `mutation ($input: SendMessageInput!) {
  sendMessage(input: $input) { __typename ... on MessageAcceptance { id status } ... on ValidationError { details { field issue } } }
}`;
const GRAPHQL_OPT_OUTS = `query { optOuts(perPage: 10) { __typename ... on OptOutPage { nodes { phone createdAt } total } } }`;

describe('Tern with CARRIER=smpp against a loopback SMSC', () => {
  it('shows the bind in the health in detail, and strangers only that the carriers are ok', async () => {
    const open = await t.request('GET', '/health');
    expect(open.status).toBe(200);
    expect(open.body).toEqual({
      status: 'ok',
      postgres: 'up',
      redis: 'up',
      carriers: 'ok',
      request: expect.any(String),
    });
    const response = await t.healthDetail();
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      carriers: [
        { carrier: 'default', state: 'bound', window: { in_use: 0, size: 10 }, errors: { bind_failures: 0 } },
      ],
    });
  });

  it("shows the workers' binds in the health in detail of an API-only process too", async () => {
    const apiOnly = await startTern({
      role: 'api',
      sharing: t,
      env: { CARRIER: 'smpp', SMPP_URL: smsc.url() },
    });
    try {
      // The API process's own Redis connection may still be coming up right after start.
      const response = await waitFor(async () => {
        const health = await apiOnly.healthDetail();
        return health.body.redis === 'up' ? health : null;
      });
      expect(response.body.carriers).toMatchObject([
        { carrier: 'default', state: 'bound', worker: expect.any(String) },
      ]);
    } finally {
      await apiOnly.stop();
    }
  });

  it('sends over REST: submit_sm at the SMSC, receipt, delivered, webhook event', async () => {
    const id = await send(alice, '447700900301', 'Hello over SMPP');
    const delivered = await statusOf(alice, id, 'delivered');
    expect(delivered).toMatchObject({
      to: '447700900301',
      encoding: 'GSM-7',
      segments: 1,
      sent_at: expect.any(String),
      delivered_at: expect.any(String),
    });
    const submit = smsc.accepted.find((entry) => entry.submit.destination === '447700900301')!.submit;
    expect(submit).toMatchObject({ destTon: 1, destNpi: 1, registeredDelivery: 1, dataCoding: 0 });
    expect(submit.shortMessage.toString('latin1')).toBe('Hello over SMPP');
    const event = await eventFor('/alice', 'message.delivered', id);
    expect(event).toMatchObject({ message: id, to: '447700900301', status: 'delivered' });
  });

  it('sends over GraphQL, a long UCS-2 text as parts tracked as one message', async () => {
    const text = `Привет ${'ж'.repeat(100)}`;
    const response = await t.graphql(
      GRAPHQL_SEND,
      { input: { to: '447700900302', message: text } },
      alice.token,
    );
    expect(response.body.data.sendMessage).toMatchObject({
      __typename: 'MessageAcceptance',
      status: 'queued',
    });
    const id = response.body.data.sendMessage.id as string;
    await statusOf(alice, id, 'delivered');
    const read = await t.graphql(
      `query ($id: ID!) { message(id: $id) { ... on Message { status encoding segments } } }`,
      { id },
      alice.token,
    );
    expect(read.body.data.message).toEqual({ status: 'delivered', encoding: 'UCS-2', segments: 2 });
    expect(
      smsc.accepted
        .filter((entry) => entry.submit.destination === '447700900302')
        .map((entry) => entry.submit.dataCoding),
    ).toEqual([8, 8]);
  });

  it('stores a reply from the mobile and sends message.replied', async () => {
    const id = await send(alice, '447700900303');
    await statusOf(alice, id, 'delivered');
    expect(await smsc.deliverMessage('447700900303', 'Sounds good')).toBe(0);
    const event = await eventFor('/alice', 'message.replied', id);
    expect(event).toMatchObject({ message: id, from: '447700900303', text: 'Sounds good' });
  });

  it('STOP opts the number out of that account only; START opts it back in', async () => {
    const id = await send(alice, '447700900304');
    await statusOf(alice, id, 'delivered');
    expect(await smsc.deliverMessage('447700900304', '  Stop ')).toBe(0);
    await eventFor('/alice', 'message.replied', id);

    const refused = await api(alice, 'POST', '/v1/messages/send', {
      to: '447700900304',
      message: 'Still there?',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: { code: 'validation_error', details: [{ field: 'to', issue: 'opted_out' }] },
    });
    const viaGraphql = await t.graphql(
      GRAPHQL_SEND,
      { input: { to: '447700900304', message: 'Still there?' } },
      alice.token,
    );
    expect(viaGraphql.body.data.sendMessage).toEqual({
      __typename: 'ValidationError',
      details: [{ field: 'to', issue: 'opted_out' }],
    });

    expect((await t.request('GET', '/v1/opt-outs')).status).toBe(401);
    expect((await api(alice, 'GET', '/v1/opt-outs?per_page=0')).status).toBe(422);
    const listed = await api(alice, 'GET', '/v1/opt-outs');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      data: [{ phone: '447700900304', created_at: expect.any(String) }],
      page: 1,
      per_page: 20,
      total: 1,
    });
    const listedGraphql = await t.graphql(GRAPHQL_OPT_OUTS, {}, alice.token);
    expect(listedGraphql.body.data.optOuts).toMatchObject({
      __typename: 'OptOutPage',
      total: 1,
      nodes: [{ phone: '447700900304' }],
    });

    expect(await smsc.deliverMessage('447700900304', 'START')).toBe(0);
    await waitFor(async () => ((await api(alice, 'GET', '/v1/opt-outs')).body.total === 0 ? true : null));
    await statusOf(alice, await send(alice, '447700900304', 'Welcome back'), 'delivered');

    // An opt-out is the account's own: another account neither sees it nor is blocked by it.
    expect(await smsc.deliverMessage('447700900304', 'END')).toBe(0);
    await waitFor(async () => ((await api(alice, 'GET', '/v1/opt-outs')).body.total === 1 ? true : null));
    expect((await api(bob, 'GET', '/v1/opt-outs')).body).toMatchObject({ data: [], total: 0 });
    expect((await t.graphql(GRAPHQL_OPT_OUTS, {}, bob.token)).body.data.optOuts.total).toBe(0);
    await statusOf(bob, await send(bob, '447700900304', 'From another sender'), 'delivered');
  });

  it('campaign dispatch skips an opted-out contact and counts it in stats.opted_out', async () => {
    const seed = await send(alice, '447700900305');
    await statusOf(alice, seed, 'delivered');
    expect(await smsc.deliverMessage('447700900305', 'unsubscribe')).toBe(0);
    await waitFor(async () => {
      expect((await t.request('GET', '/v1/opt-outs')).status).toBe(401);
      expect((await api(alice, 'GET', '/v1/opt-outs?per_page=0')).status).toBe(422);
      const listed = await api(alice, 'GET', '/v1/opt-outs');
      return listed.body.data.some((optOut: { phone: string }) => optOut.phone === '447700900305')
        ? true
        : null;
    });

    const template = (await api(alice, 'POST', '/v1/templates', { name: 'Greeting', content: 'Hi {{name}}' }))
      .body.template;
    const campaign = (await api(alice, 'POST', '/v1/campaigns', { name: 'Opt-out aware', template })).body
      .campaign;
    for (const phone of ['447700900305', '447700900306']) {
      expect(
        (await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, { phone, name: 'Sam' })).status,
      ).toBe(201);
    }
    expect((await api(alice, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
    const finished = await waitFor(async () => {
      const response = await api(alice, 'GET', `/v1/campaigns/${campaign}`);
      return response.body.status === 'finished' && response.body.stats.delivered === 1
        ? response.body
        : null;
    });
    expect(finished.stats).toEqual({
      contacts: 2,
      waiting: 0,
      queued: 0,
      sent: 0,
      delivered: 1,
      failed: 0,
      replied: 0,
      opted_out: 1,
    });
    const messages = await api(alice, 'GET', `/v1/messages?campaign=${campaign}`);
    expect(messages.body.data.map((message: { to: string }) => message.to)).toEqual(['447700900306']);
    const viaGraphql = await t.graphql(
      `query ($id: ID!) { campaign(id: $id) { ... on Campaign { stats { contacts optedOut } } } }`,
      { id: campaign },
      alice.token,
    );
    expect(viaGraphql.body.data.campaign.stats).toEqual({ contacts: 2, optedOut: 1 });
  });

  it('backs off from ESME_RTHROTTLED and delivers the message once', async () => {
    const submitsBefore = smsc.submitsReceived().length;
    smsc.behaviour = (n) => (n <= submitsBefore + 2 ? { status: 0x58 } : 'ok');
    const id = await send(alice, '447700900311', 'Not so fast');
    await statusOf(alice, id, 'delivered');
    expect(smsc.submitsReceived().length - submitsBefore).toBe(3);
    expect(smsc.accepted.filter((entry) => entry.submit.destination === '447700900311')).toHaveLength(1);
    const health = await t.healthDetail();
    expect(health.body.carriers[0].errors.throttled).toBeGreaterThanOrEqual(2);
    smsc.behaviour = () => 'ok';
  });

  it('sends every message exactly once when the connection drops mid-window, and all are delivered', async () => {
    let dropped = false;
    const submitsBefore = smsc.submitsReceived().length;
    smsc.behaviour = (n) => {
      if (dropped || n <= submitsBefore + 2) return 'ok';
      if (n === submitsBefore + 5) {
        dropped = true;
        setTimeout(() => smsc.dropConnections(), 20);
      }
      return 'silent';
    };
    const recipients = Array.from({ length: 8 }, (_, index) => `44770090040${index}`);
    const ids = await Promise.all(recipients.map((to) => send(alice, to, `Window ${to}`)));
    for (const id of ids) await statusOf(alice, id, 'delivered', 20_000);
    for (const to of recipients)
      expect(
        smsc.accepted.filter((entry) => entry.submit.destination === to),
        to,
      ).toHaveLength(1);
    expect(smsc.submitsReceived().length - submitsBefore).toBeGreaterThan(recipients.length);
    smsc.behaviour = () => 'ok';
  });
});

describe('a changed SMPP_URL once carrier default exists', () => {
  it('stops start-up naming the variable and the CLI command, printing neither password', async () => {
    const rotated = startTern({
      sharing: t,
      env: { CARRIER: 'smpp', SMPP_URL: smsc.url({ password: 'rotated' }), ...SMPP_ENV },
    });
    const error = await rotated.then(
      (started) => started.stop().then(() => null),
      (refused: unknown) => refused as Error,
    );
    expect(error?.message).toMatch(/^SMPP_URL .*carriers update default --url .*unset SMPP_URL/);
    expect(error?.message).not.toMatch(/rotated|secret/);
    const moved = await startTern({
      sharing: t,
      env: { CARRIER: 'smpp', SMPP_URL: smsc.url().replace('127.0.0.1', 'localhost'), ...SMPP_ENV },
    }).then(
      (started) => started.stop().then(() => null),
      (refused: unknown) => refused as Error,
    );
    expect(moved?.message).toMatch(/^SMPP_URL /);
  });
});

describe('a refused bind', () => {
  it('leaves messages queued, says so in /health, and sends them once the SMSC lets Tern in', async () => {
    const strict = await LoopbackSmsc.start('tern', 'other');
    strict.autoReceipt = 'tlv';
    const other = await startTern({
      env: { CARRIER: 'smpp', SMPP_URL: strict.url({ password: 'secret' }), ...SMPP_ENV },
    });
    try {
      const carol = await other.createAccount();
      const response = await other.request('POST', '/v1/messages/send', {
        token: carol.token,
        body: { to: '447700900501', message: 'Patience' },
      });
      expect(response.status).toBe(202);
      const health = await other.healthDetail();
      expect(health.status).toBe(200);
      expect(health.body.carriers).toMatchObject([
        { state: 'bind_failed', last_error: expect.stringContaining('ESME_RINVPASWD') },
      ]);
      // A stranger learns that the carriers are degraded, not why, nor where the SMSC is.
      const open = await other.request('GET', '/health');
      expect(open.body).toMatchObject({ status: 'ok', carriers: 'degraded' });
      for (const secret of ['ESME_RINVPASWD', 'default', '127.0.0.1', 'worker'])
        expect(JSON.stringify(open.body)).not.toContain(secret);
      // Not "after a while": after the bind was tried, and refused, again since the message was
      // accepted, with its send job still in the queue; only then is "still queued" a finding.
      const bindsAtSend = binds(strict);
      await waitFor(async () => {
        if (binds(strict) < bindsAtSend + 2) return null;
        const job = await other.tern.deps.queues.messageSend.getJob(response.body.message);
        return job && ['waiting', 'delayed', 'prioritized'].includes(await job.getState()) ? true : null;
      });
      expect(strict.accepted).toHaveLength(0);
      const waiting = await other.request('GET', `/v1/messages/${response.body.message}`, {
        token: carol.token,
      });
      expect(waiting.body.status).toBe('queued');

      strict.password = 'secret';
      await waitFor(async () => {
        const read = await other.request('GET', `/v1/messages/${response.body.message}`, {
          token: carol.token,
        });
        return read.body.status === 'delivered' ? true : null;
      }, 20_000);
      expect(strict.accepted).toHaveLength(1);
    } finally {
      await other.stop();
      await strict.close();
    }
  });
});

describe('opt-out with the simulator carrier', () => {
  it('an inbound STOP through the carrier sink opts the number out', async () => {
    const simulated = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
    try {
      const dave = await simulated.createAccount();
      const first = await simulated.request('POST', '/v1/messages/send', {
        token: dave.token,
        body: { to: '5511955550002', message: 'Hi' },
      });
      expect(first.status).toBe(202);
      await waitFor(async () => {
        const read = await simulated.request('GET', `/v1/messages/${first.body.message}`, {
          token: dave.token,
        });
        return read.body.status === 'delivered' ? true : null;
      });
      // What the simulator's sink (app.ts) does with a reply.
      await simulated.tern.services.carrierReports.recordInbound('simulator', {
        carrierMessageId: 'sim_stop_1',
        from: '5511955550002',
        to: null,
        text: 'QUIT',
        at: new Date(),
      });
      const refused = await simulated.request('POST', '/v1/messages/send', {
        token: dave.token,
        body: { to: '5511955550002', message: 'Hi again' },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'opted_out' }]);
      const health = await simulated.healthDetail();
      expect(health.body.carriers).toEqual([
        {
          carrier: 'default',
          state: 'ready',
          enabled: true,
          max_per_second: null,
          circuit: 'closed',
          worker: expect.any(String),
          updated_at: expect.any(String),
        },
      ]);
    } finally {
      await simulated.stop();
    }
  });
});
