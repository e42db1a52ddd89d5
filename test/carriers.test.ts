import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CarrierUnavailableError } from '../src/carriers/carrier.js';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliCommand } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Carriers and routes end to end: two Tern processes (in this one) on one database, SMPP to
// loopback SMSCs, changes made with the CLI and applied without a restart.

const SMPP_ENV = {
  SMPP_RECONNECT_MS: '50',
  SMPP_RESPONSE_TIMEOUT_MS: '1000',
  SMPP_THROTTLE_BACKOFF_MS: '20',
  CLAIM_LEASE_MS: '4000',
};

let a: LoopbackSmsc;
let b: LoopbackSmsc;
let c: LoopbackSmsc;
let t: TestTern;
let t2: TestTern;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  [a, b, c] = await Promise.all([LoopbackSmsc.start(), LoopbackSmsc.start(), LoopbackSmsc.start()]);
  for (const smsc of [a, b, c]) smsc.autoReceipt = 'tlv';
  t = await startTern({ env: SMPP_ENV });
  t2 = await startTern({ sharing: t, env: SMPP_ENV });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  const catalog = t.tern.services.carrierCatalog;
  // A bind for each process: either may hand any message over.
  await catalog.addCarrier('a', { url: a.url(), binds: 2 });
  await catalog.addCarrier('b', { url: b.url(), binds: 2 });
  await waitFor(async () =>
    [t, t2].every((tern) => boundHere(tern, 'a') && boundHere(tern, 'b')) ? true : null,
  );
}, 60_000);

afterAll(async () => {
  await t2?.stop();
  await t?.stop();
  await Promise.all([a, b, c].map((smsc) => smsc?.close()));
});

function cliEnv(): Record<string, string> {
  return {
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
  };
}

async function cli(...args: string[]): Promise<any[]> {
  const run = await runCliCommand(args, cliEnv());
  expect(run.code, run.stderr).toBe(0);
  return run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Whether the carrier has its bind open in this Tern. */
function boundHere(tern: TestTern, name: string): boolean {
  return tern.tern.carriers!.health().some((entry) => entry.carrier === name && entry.state === 'bound');
}

/** Sets the route for (account, prefix) as given, adding it or changing the one there is. */
async function route(
  prefix: string,
  choice: { carriers?: string; split?: string },
  accountId: string | null = null,
) {
  const catalog = t.tern.services.carrierCatalog;
  const existing = (await catalog.settings()).routes.find(
    (entry) => entry.prefix === prefix && entry.accountId === accountId,
  );
  if (existing) await catalog.updateRoute(existing.id, choice);
  else await catalog.addRoute(prefix, accountId, choice);
  // Every process reads the routes again within a second or so.
  await Promise.all([t, t2].map((tern) => tern.tern.services.carrierDirectory.refresh()));
}

async function send(tern: TestTern, account: TestAccount, to: string, message = 'Routed') {
  const response = await tern.request('POST', '/v1/messages/send', {
    token: account.token,
    body: { to, message },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

function settled(account: TestAccount, id: string, timeoutMs = 20_000) {
  return waitFor(async () => {
    const response = await t.request('GET', `/v1/messages/${id}`, { token: account.token });
    return response.body.status === 'delivered' || response.body.status === 'failed' ? response.body : null;
  }, timeoutMs);
}

const acceptedFor = (smsc: LoopbackSmsc, to: string) =>
  smsc.accepted.filter((entry) => entry.submit.destination === to).length;

describe('carriers and routes from the CLI', () => {
  it('adds a carrier, prints it without its password, and every process binds to it without a restart', async () => {
    const [added] = await cli(
      'carriers',
      'add',
      'c',
      '--url',
      c.url(),
      '--binds',
      '2',
      '--max-per-second',
      '500',
    );
    expect(added).toEqual({
      carrier: 'c',
      kind: 'smpp',
      url: `smpp://tern@127.0.0.1:${c.port}`,
      callback_url: null,
      max_per_second: 500,
      binds: 2,
      enabled: true,
      binds_open: 0,
      state: expect.any(String),
      circuit: 'closed',
      last_error: null,
      last_hour: { hand_overs: 0, delivered: 0, failed: 0 },
    });
    expect(JSON.stringify(added)).not.toContain('secret');
    await waitFor(async () => (c.boundSessions.length === 2 ? true : null), 30_000);
    // Two binds, two processes: one each, once both processes see each other.
    await waitFor(async () => (boundHere(t, 'c') && boundHere(t2, 'c') ? true : null), 30_000);
    const stored = await t.tern.deps.prisma.carrier.findUniqueOrThrow({ where: { name: 'c' } });
    expect(`${stored.url} ${stored.passwordSealed}`).not.toContain('secret');
    const listed = await cli('carriers', 'list');
    expect(listed.find((entry) => entry.carrier === 'c')).toMatchObject({ binds_open: 2, state: 'bound' });
  }, 90_000);

  it('routes a change made with the CLI in every process, explains it, and refuses what it must', async () => {
    const [added] = await cli('routes', 'add', '--prefix', '3361', '--carriers', 'c,a');
    expect(added).toEqual({
      route: expect.stringMatching(/^rte_/),
      prefix: '3361',
      account: null,
      carriers: ['c', 'a'],
      split: null,
    });
    const [explained] = await cli('routes', 'explain', '--to', '+33612345678', '--account', alice.email);
    expect(explained).toMatchObject({
      route: added.route,
      prefix: '3361',
      account: null,
      carriers: ['c', 'a'],
    });
    expect(explained.reason).toContain('3361');
    const refused = await runCliCommand(['routes', 'add', '--prefix', '3361', '--carriers', 'a'], cliEnv());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/exists already/);
    await expect(t.tern.services.carrierCatalog.removeCarrier('c')).rejects.toThrow(/still names c/);
    // Both processes send through c: the change reached each within seconds.
    for (const [index, tern] of [t, t2].entries()) {
      const to = `3361234567${index}`;
      await waitFor(async () => {
        const id = await send(tern, alice, to);
        await settled(alice, id);
        return acceptedFor(c, to) > 0 ? true : null;
      }, 30_000);
    }
    const [disabled] = await cli('carriers', 'disable', 'c');
    expect(disabled).toMatchObject({ carrier: 'c', enabled: false });
    await waitFor(async () =>
      [t, t2].every(
        (tern) => tern.tern.carriers!.health().find((entry) => entry.carrier === 'c')?.enabled === false,
      )
        ? true
        : null,
    );
    const after = await send(t2, alice, '33612345679');
    expect(await settled(alice, after)).toMatchObject({ status: 'delivered' });
    expect(acceptedFor(c, '33612345679')).toBe(0);
    expect(acceptedFor(a, '33612345679')).toBe(1);
    // A new URL rebinds every process to the SMSC it names.
    await cli('carriers', 'update', 'c', '--url', b.url(), '--binds', '1');
    await waitFor(async () => (c.boundSessions.length === 0 ? true : null), 30_000);
    const [removed] = await cli('routes', 'remove', added.route);
    expect(removed).toEqual({ route: added.route, removed: true });
    await t.tern.services.carrierCatalog.removeCarrier('c');
  }, 120_000);
});

describe('what an operator sees', () => {
  it('lists why a carrier is down: the SMSC refused the password', async () => {
    const strict = await LoopbackSmsc.start('tern', 'right-password');
    try {
      await t.tern.services.carrierCatalog.addCarrier('refusing', { url: strict.url({ password: 'wrong' }) });
      await Promise.all([t, t2].map((tern) => tern.tern.services.carrierDirectory.refresh()));
      const listed = await waitFor(async () => {
        const lines = await cli('carriers', 'list');
        const line = lines.find((entry) => entry.carrier === 'refusing');
        return line?.state === 'bind_failed' ? line : null;
      }, 30_000);
      expect(listed).toMatchObject({
        binds_open: 0,
        last_error: expect.stringContaining('ESME_RINVPASWD'),
      });
      expect(JSON.stringify(listed)).not.toContain('wrong');
    } finally {
      await t.tern.services.carrierCatalog.removeCarrier('refusing');
      await strict.close();
    }
  }, 90_000);

  it('lists every carrier with its binds and circuit in /health on the metrics listener, and by carrier in the metrics', async () => {
    // Each worker publishes its carriers every second: both processes' binds show.
    const entries = await waitFor(async () => {
      const health = await t2.healthDetail();
      const listed = health.body.carriers as { carrier: string; worker: string; binds_open?: number }[];
      const workersOf = (name: string) =>
        new Set(listed.filter((entry) => entry.carrier === name).map((entry) => entry.worker)).size;
      return ['a', 'b', 'default'].every((name) => workersOf(name) === 2) ? listed : null;
    });
    // The simulator has no sessions: no binds to show, nor a series of them.
    expect(entries.find((entry) => entry.carrier === 'default')).not.toHaveProperty('binds_open');
    expect(entries.find((entry) => entry.carrier === 'a')).toMatchObject({
      state: 'bound',
      enabled: true,
      binds: 2,
      binds_open: 1,
      circuit: 'closed',
      window: { in_use: expect.any(Number), size: 10 },
    });
    const metrics = await t.tern.deps.metrics.registry.metrics();
    expect(metrics).toContain('tern_carrier_up{carrier="a",state="bound"} 1');
    expect(metrics).toContain('tern_carrier_binds_open{carrier="b"} 1');
    expect(metrics).not.toContain('tern_carrier_binds_open{carrier="default"}');
    // The queues through which processes without a bind hand messages to those with one.
    expect(metrics).toMatch(/^tern_queue_jobs\{queue="message-send-via-a",state="wait"\} \d+$/m);
    expect(metrics).not.toContain('queue="message-send-via-default"');
  });
});

describe('routing', () => {
  it("lands each message on its route's carrier: by prefix, and by account before a global route", async () => {
    await route('44', { carriers: 'a' });
    await route('4477009002', { carriers: 'b' });
    await route('44', { carriers: 'b' }, bob.account);
    const cases: [TestAccount, string, LoopbackSmsc][] = [
      [alice, '447700900101', a],
      [alice, '447700900201', b],
      [bob, '447700900102', b],
    ];
    for (const [account, to, smsc] of cases) {
      expect(await settled(account, await send(t, account, to))).toMatchObject({ status: 'delivered' });
      expect(acceptedFor(smsc, to), to).toBe(1);
      expect(acceptedFor(smsc === a ? b : a, to), to).toBe(0);
    }
    const stored = await t.tern.deps.prisma.message.findFirstOrThrow({ where: { to: '447700900201' } });
    const shown = await t.request('GET', `/v1/messages/${stored.id}`, { token: alice.token });
    expect(shown.body.carrier).toBe('b');
    const graphql = await t.graphql(
      `query { message(id: "${stored.id}") { ... on Message { carrier } } }`,
      {},
      alice.token,
    );
    expect(graphql.body.data.message).toEqual({ carrier: 'b' });
  });

  it('runs a second simulator beside the first, each reporting what it took', async () => {
    await t.tern.services.carrierCatalog.addCarrier('sim2', { url: 'simulator://?delay_ms=10' });
    await route('3363', { carriers: 'sim2' });
    await waitFor(async () =>
      [t, t2].every((tern) => tern.tern.carriers!.health().some((entry) => entry.carrier === 'sim2'))
        ? true
        : null,
    );
    const id = await send(t, alice, '33630000002', 'Two simulators');
    expect(await settled(alice, id)).toMatchObject({ status: 'delivered', carrier: 'sim2' });
    const reply = await waitFor(() =>
      t.tern.deps.prisma.inboundMessage.findFirst({ where: { messageId: id } }),
    );
    expect(reply.carrier).toBe('sim2');
    const other = await send(t, alice, '5511966661299', 'The default simulator');
    expect(await settled(alice, other)).toMatchObject({ status: 'delivered', carrier: 'default' });
  });

  it('splits 1,000 messages within 5 points of their weights', async () => {
    await route('3362', { split: 'a=70,b=30' });
    const before = { a: a.accepted.length, b: b.accepted.length };
    const numbers = Array.from({ length: 1000 }, (_, index) => `3362${String(index).padStart(7, '0')}`);
    for (let start = 0; start < numbers.length; start += 50)
      await Promise.all(numbers.slice(start, start + 50).map((to) => send(t, alice, to, 'Split')));
    await waitFor(
      async () => (a.accepted.length + b.accepted.length - before.a - before.b >= 1000 ? true : null),
      60_000,
    );
    const share = (a.accepted.length - before.a) / 1000;
    expect(share).toBeGreaterThanOrEqual(0.65);
    expect(share).toBeLessThanOrEqual(0.75);
  }, 90_000);

  it('refuses a number no route covers at the door: 422 no_route on to, over REST and GraphQL', async () => {
    const catalog = t.tern.services.carrierCatalog;
    const fallback = (await catalog.settings()).routes.find(
      (entry) => entry.prefix === '*' && !entry.accountId,
    )!;
    await catalog.removeRoute(fallback.id);
    await Promise.all([t, t2].map((tern) => tern.tern.services.carrierDirectory.refresh()));
    try {
      const refused = await t2.request('POST', '/v1/messages/send', {
        token: alice.token,
        body: { to: '5511966661234', message: 'Nowhere' },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'no_route' }]);
      const graphql = await t.graphql(
        `mutation { sendMessage(input: {to: "5511966661234", message: "Nowhere"}) { __typename ... on ValidationError { details { field issue } } } }`,
        {},
        alice.token,
      );
      expect(graphql.body.data.sendMessage).toEqual({
        __typename: 'ValidationError',
        details: [{ field: 'to', issue: 'no_route' }],
      });
      await expectCampaignNoRoute();
    } finally {
      await catalog.addRoute('*', null, { carriers: 'default' });
      await Promise.all([t, t2].map((tern) => tern.tern.services.carrierDirectory.refresh()));
    }
  });
});

/** A campaign to one routed and one unrouted number: the unrouted one fails no_route, the other goes. */
async function expectCampaignNoRoute(): Promise<void> {
  const api = (method: string, path: string, body?: unknown) =>
    t.request(method, path, { token: alice.token, ...(body === undefined ? {} : { body }) });
  const template = (await api('POST', '/v1/templates', { name: 'Routes', content: 'Hi {{name}}' })).body
    .template;
  const campaign = (await api('POST', '/v1/campaigns', { name: 'Partly routed', template })).body.campaign;
  for (const phone of ['447700900777', '5511966661235'])
    expect((await api('POST', `/v1/campaigns/${campaign}/contacts`, { phone, name: 'Sam' })).status).toBe(
      201,
    );
  expect((await api('POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
  const finished = await waitFor(async () => {
    const response = await api('GET', `/v1/campaigns/${campaign}`);
    return response.body.status === 'finished' && response.body.stats.delivered === 1 ? response.body : null;
  }, 20_000);
  expect(finished.stats).toMatchObject({ contacts: 2, delivered: 1, failed: 1 });
  const listed = await api('GET', `/v1/messages?campaign=${campaign}&to=5511966661235`);
  expect(listed.body.data[0]).toMatchObject({ status: 'failed', carrier: null, error: { code: 'no_route' } });
}

describe('the unavailable error', () => {
  it('says whether the carrier may have taken the message', () => {
    expect(new CarrierUnavailableError('x').outcomeUnknown).toBe(false);
    expect(new CarrierUnavailableError('x', true).outcomeUnknown).toBe(true);
  });
});
