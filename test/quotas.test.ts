import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/lib/ids.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// Segment quotas and destination countries: what an account is let through, under every way of
// sending at once, and what it sees of its usage.

let t: TestTern;
// What Tern logged at warn level and above, as parsed lines.
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  });
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20' }, logger: pino({ level: 'warn' }, sink) });
});
afterAll(() => t.stop());

const ONE_SEGMENT = 'Your code is 1234';
const TWO_SEGMENTS = 'x'.repeat(161);

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

const send = (account: TestAccount, to: string, message = ONE_SEGMENT) =>
  api(account, 'POST', '/v1/messages/send', { to, message });

/** A fresh account with the operator's limits. */
async function accountWith(limits: Record<string, unknown>): Promise<TestAccount> {
  const account = await t.createAccount();
  await t.tern.services.accountQuotas.setLimits(account.account, limits);
  return account;
}

async function usage(account: TestAccount): Promise<{ today_segments: number; month_segments: number }> {
  const settings = await api(account, 'GET', '/v1/settings');
  expect(settings.status).toBe(200);
  return settings.body.usage;
}

const storedMessages = (account: TestAccount) =>
  t.tern.deps.prisma.message.count({ where: { accountId: account.account } });

/** A phone of the simulator's that delivers, the i-th of a block. */
const phone = (i: number) => `5511987${String(i).padStart(6, '0')}`;

describe('a daily quota of 10 segments', () => {
  it('admits exactly 10 of 30 parallel single-segment sends; the others are 429 quota_exceeded with Retry-After', async () => {
    const account = await accountWith({ dailySegments: 10 });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => send(account, phone(i))));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.body.error.code).toBe('quota_exceeded');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(24 * 60 * 60);
    expect(await storedMessages(account)).toBe(10);
    expect(await usage(account)).toEqual({ today_segments: 10, month_segments: 10 });
  });

  it('refuses a two-segment message at 9 of 10, then takes a one-segment one', async () => {
    const account = await accountWith({ dailySegments: 10 });
    for (let i = 0; i < 9; i++) expect((await send(account, phone(i))).status).toBe(202);
    const two = await send(account, phone(9), TWO_SEGMENTS);
    expect(two.status).toBe(429);
    expect(two.body.error.code).toBe('quota_exceeded');
    expect((await send(account, phone(10))).status).toBe(202);
    expect(await usage(account)).toEqual({ today_segments: 10, month_segments: 10 });
  });

  it('refuses a send with an Idempotency-Key over the quota, and the same key sends once there is room', async () => {
    const account = await accountWith({ dailySegments: 1 });
    expect((await send(account, phone(1))).status).toBe(202);
    const keyed = () =>
      t.request('POST', '/v1/messages/send', {
        token: account.token,
        headers: { 'Idempotency-Key': 'order-77' },
        body: { to: phone(2), message: ONE_SEGMENT },
      });
    const refused = await keyed();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('quota_exceeded');
    await t.tern.services.accountQuotas.setLimits(account.account, { dailySegments: 2 });
    const accepted = await keyed();
    expect(accepted.status).toBe(202);
    expect((await keyed()).headers.get('idempotent-replayed')).toBe('true');
    expect(await storedMessages(account)).toBe(2);
  });

  it('admits exactly 10 of 30 aliased sends in one GraphQL request, each alias answering its own result', async () => {
    const account = await accountWith({ dailySegments: 10 });
    const fields = Array.from(
      { length: 30 },
      (_, i) =>
        `s${i}: sendMessage(input: { to: "${phone(i)}", message: "${ONE_SEGMENT}" }) { __typename ... on MessageAcceptance { id } ... on QuotaExceededError { code retryAfter } }`,
    );
    // Mutations run one after the other: the first ten are stored and say so, the others are refused.
    const response = await t.graphql(`mutation { ${fields.join('\n')} }`, {}, account.token);
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    const answers = Array.from({ length: 30 }, (_, i) => response.body.data[`s${i}`]);
    const stored = await t.tern.deps.prisma.message.findMany({
      where: { accountId: account.account },
      select: { id: true },
    });
    expect(
      answers
        .slice(0, 10)
        .map((answer) => answer.id)
        .sort(),
    ).toEqual(stored.map((m) => m.id).sort());
    for (const refused of answers.slice(10)) {
      expect(refused.__typename).toBe('QuotaExceededError');
      expect(refused.code).toBe('quota_exceeded');
      expect(refused.retryAfter).toBeGreaterThan(0);
    }
    expect(await storedMessages(account)).toBe(10);
    expect(await usage(account)).toEqual({ today_segments: 10, month_segments: 10 });
  });

  it('admits exactly 10 of 30 sends in three batched GraphQL requests sent at once', async () => {
    const account = await accountWith({ dailySegments: 10 });
    const operation = (i: number) => ({
      query: 'mutation ($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }',
      variables: { input: { to: phone(i), message: ONE_SEGMENT } },
    });
    const batches = await Promise.all(
      [0, 1, 2].map((batch) =>
        t.request('POST', '/graphql', {
          token: account.token,
          body: Array.from({ length: 10 }, (_, i) => operation(batch * 10 + i)),
        }),
      ),
    );
    const results = batches.flatMap((batch) => batch.body as any[]);
    expect(results).toHaveLength(30);
    const accepted = results.filter((result) => result.data?.sendMessage?.__typename === 'MessageAcceptance');
    expect(accepted).toHaveLength(10);
    const refused = results.filter((result) => result.data?.sendMessage?.__typename === 'QuotaExceededError');
    expect(refused).toHaveLength(20);
    expect(await storedMessages(account)).toBe(10);
  });

  it('holds a monthly quota the same way, and says so in the settings', async () => {
    const account = await accountWith({ monthlySegments: 3 });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(account, phone(i))));
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(3);
    const settings = await api(account, 'GET', '/v1/settings');
    expect(settings.body.limits).toEqual({
      daily_segments: null,
      monthly_segments: 3,
      allowed_countries: [],
      timezone: 'UTC',
    });
    expect(settings.body.usage).toEqual({ today_segments: 3, month_segments: 3 });
  });

  it('gives back the segments of a message cancelled before any carrier took it', async () => {
    const account = await accountWith({ dailySegments: 2 });
    const sendAt = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const scheduled = await Promise.all(
      [0, 1].map((i) =>
        api(account, 'POST', '/v1/messages/send', { to: phone(i), message: ONE_SEGMENT, send_at: sendAt }),
      ),
    );
    expect(scheduled.map((answer) => answer.status)).toEqual([202, 202]);
    expect((await send(account, phone(2))).status).toBe(429);
    const cancelled = await api(account, 'POST', `/v1/messages/${scheduled[0]!.body.message}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(await usage(account)).toEqual({ today_segments: 1, month_segments: 1 });
    expect((await send(account, phone(3))).status).toBe(202);
    expect(await usage(account)).toEqual({ today_segments: 2, month_segments: 2 });
  });

  it('gives back the segments of a message that expired before its release', async () => {
    const account = await accountWith({ dailySegments: 5 });
    const sendAt = new Date(t.clock.now().getTime() + 120_000).toISOString();
    const sent = await api(account, 'POST', '/v1/messages/send', {
      to: phone(1),
      message: ONE_SEGMENT,
      send_at: sendAt,
      validity: 60,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect((await usage(account)).today_segments).toBe(1);
    // Past its send_at and its validity at once: the release finds it expired.
    t.clock.advance(200_000);
    const failed = await waitFor(async () => {
      const message = await api(await t.login(account), 'GET', `/v1/messages/${sent.body.message}`);
      return message.body.status === 'failed' ? message.body : null;
    });
    expect(failed.error.code).toBe('expired');
    expect((await usage(await t.login(account))).today_segments).toBe(0);
  });

  it('keeps the segments of a message the carrier took, even when it then fails', async () => {
    const account = await accountWith({ dailySegments: 5 });
    // The simulator fails a number ending 0001 after taking it.
    const sent = await send(account, '5511999990001');
    expect(sent.status).toBe(202);
    await waitFor(async () => {
      const message = await api(account, 'GET', `/v1/messages/${sent.body.message}`);
      return message.body.status === 'failed' ? message : null;
    });
    expect(await usage(account)).toEqual({ today_segments: 1, month_segments: 1 });
  });
});

describe('the settings', () => {
  it('shows the limits and the usage through GraphQL too', async () => {
    const account = await accountWith({ dailySegments: 7, allowedCountries: ['GB', 'IE'] });
    expect((await send(account, '447400123456')).status).toBe(202);
    const response = await t.graphql(
      '{ settings { limits { dailySegments monthlySegments allowedCountries } usage { todaySegments monthSegments } } }',
      {},
      account.token,
    );
    expect(response.body.data.settings).toEqual({
      limits: { dailySegments: 7, monthlySegments: null, allowedCountries: ['GB', 'IE'] },
      usage: { todaySegments: 1, monthSegments: 1 },
    });
  });

  it('cannot be changed by the account', async () => {
    const account = await accountWith({ dailySegments: 7 });
    const patched = await api(account, 'PATCH', '/v1/settings', { limits: { daily_segments: 1000 } });
    expect(patched.status).toBe(422);
    expect(patched.body.error.details).toEqual([{ field: 'limits', issue: 'unknown_field' }]);
    expect((await api(account, 'GET', '/v1/settings')).body.limits.daily_segments).toBe(7);
  });
});

describe('the notices at 80 % and 100 %', () => {
  const thresholdCount = async (period: string, threshold: string) => {
    const { values } = await t.tern.deps.metrics.quotaThresholds.get();
    return values.find((v) => v.labels.period === period && v.labels.threshold === threshold)?.value ?? 0;
  };

  it('counts and logs an account passing 80 % and 100 % of its daily quota, once each', async () => {
    const account = await accountWith({ dailySegments: 10 });
    const [before80, before100] = [await thresholdCount('daily', '80'), await thresholdCount('daily', '100')];
    for (let i = 0; i < 7; i++) expect((await send(account, phone(i))).status).toBe(202);
    expect(await thresholdCount('daily', '80')).toBe(before80);
    const sendAt = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const eighth = await api(account, 'POST', '/v1/messages/send', {
      to: phone(7),
      message: ONE_SEGMENT,
      send_at: sendAt,
    });
    expect(eighth.status).toBe(202);
    expect(await thresholdCount('daily', '80')).toBe(before80 + 1);
    // Below the mark and across it again: told once in the day all the same.
    expect((await api(account, 'POST', `/v1/messages/${eighth.body.message}/cancel`)).status).toBe(200);
    expect((await send(account, phone(8))).status).toBe(202);
    expect(await thresholdCount('daily', '80')).toBe(before80 + 1);
    expect((await send(account, phone(11))).status).toBe(202);
    expect(await thresholdCount('daily', '100')).toBe(before100);
    expect((await send(account, phone(9))).status).toBe(202);
    expect((await send(account, phone(10))).status).toBe(429);
    expect(await thresholdCount('daily', '80')).toBe(before80 + 1);
    expect(await thresholdCount('daily', '100')).toBe(before100 + 1);
    const notices = logged.filter((line) => line.account === account.account && line.period === 'daily');
    expect(notices.map((line) => [line.threshold, line.used, line.limit])).toEqual([
      [80, 8, 10],
      [100, 10, 10],
    ]);
  });
});

describe('destination countries', () => {
  it('refuses a +1 number for a GB-only account over /v1 and GraphQL, and takes a GB one', async () => {
    const account = await accountWith({ allowedCountries: ['GB'] });
    const us = await send(account, '+12025550123');
    expect(us.status).toBe(422);
    expect(us.body.error.details).toEqual([{ field: 'to', issue: 'destination_not_allowed' }]);
    const graphql = await t.graphql(
      'mutation { sendMessage(input: { to: "+12025550123", message: "Hi" }) { __typename ... on ValidationError { code details { field issue } } } }',
      {},
      account.token,
    );
    expect(graphql.body.data.sendMessage).toEqual({
      __typename: 'ValidationError',
      code: 'validation_error',
      details: [{ field: 'to', issue: 'destination_not_allowed' }],
    });
    expect((await send(account, '+447400123456')).status).toBe(202);
    expect(await storedMessages(account)).toBe(1);
    const settings = await api(account, 'GET', '/v1/settings');
    expect(settings.body.limits.allowed_countries).toEqual(['GB']);
  });

  it('gives new accounts DEFAULT_ALLOWED_COUNTRIES, and refuses a code that is no country at start', async () => {
    expect(() => loadConfig({ NODE_ENV: 'test', DEFAULT_ALLOWED_COUNTRIES: 'GB,XX' })).toThrow(
      /DEFAULT_ALLOWED_COUNTRIES: expected ISO 3166 alpha-2 codes/,
    );
    const limited = await startTern({ env: { DEFAULT_ALLOWED_COUNTRIES: 'gb, IE' } });
    try {
      const account = await limited.createAccount();
      const settings = await limited.request('GET', '/v1/settings', { token: account.token });
      expect(settings.body.limits.allowed_countries).toEqual(['GB', 'IE']);
      const us = await limited.request('POST', '/v1/messages/send', {
        token: account.token,
        body: { to: '12025550123', message: ONE_SEGMENT },
      });
      expect(us.body.error.details).toEqual([{ field: 'to', issue: 'destination_not_allowed' }]);
      const ie = await limited.request('POST', '/v1/messages/send', {
        token: account.token,
        body: { to: '353871234567', message: ONE_SEGMENT },
      });
      expect(ie.status).toBe(202);
    } finally {
      await limited.stop();
    }
  });

  it('refuses +1 numbers in no country’s range to a US-only account, and takes a valid US number', async () => {
    const account = await accountWith({ allowedCountries: ['US'] });
    // Area codes no country of +1 has: 000, 123, 911, 976, 999, 880 (each a 10-digit number).
    for (const to of [
      '10005550100',
      '11235550100',
      '19115550100',
      '19765550100',
      '19995550100',
      '18805550100',
    ]) {
      const refused = await send(account, to);
      expect(refused.status, to).toBe(422);
      expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'destination_not_allowed' }]);
    }
    expect((await send(account, '+12025550123')).status).toBe(202);
    expect(await storedMessages(account)).toBe(1);
  });

  it('refuses a number of a length its country cannot have, with 422 impossible_number on to', async () => {
    const account = await t.createAccount();
    const response = await send(account, '+4477009001234');
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'to', issue: 'impossible_number' }]);
    expect(await storedMessages(account)).toBe(0);
  });
});

describe('campaigns', () => {
  async function campaignOf(account: TestAccount, phones: string[]): Promise<string> {
    const template = await api(account, 'POST', '/v1/templates', { name: 'Quota', content: 'Hi {{name}}' });
    const created = await api(account, 'POST', '/v1/campaigns', {
      name: 'Quota',
      template: template.body.template,
      batch_size: 3,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const campaign = created.body.campaign as string;
    await t.tern.deps.prisma.contact.createMany({
      data: phones.map((phone, i) => ({
        id: newId('cnt'),
        accountId: account.account,
        campaignId: campaign,
        phone,
        name: `Contact ${i}`,
        createdAt: new Date(Date.now() + i),
      })),
    });
    return campaign;
  }

  const campaignIn = (account: TestAccount, campaign: string, status: string) =>
    waitFor(async () => {
      const response = await api(account, 'GET', `/v1/campaigns/${campaign}`);
      return response.body.status === status ? response.body : null;
    }, 20_000);

  it('pauses at the quota with paused_reason quota_exceeded, and resumes to the end once there is room', async () => {
    const account = await accountWith({ dailySegments: 5 });
    const campaign = await campaignOf(
      account,
      Array.from({ length: 8 }, (_, i) => phone(100 + i)),
    );
    expect((await api(account, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
    const paused = await campaignIn(account, campaign, 'paused');
    expect(paused.paused_reason).toBe('quota_exceeded');
    expect(await storedMessages(account)).toBe(5);
    expect(await usage(account)).toEqual({ today_segments: 5, month_segments: 5 });

    await t.tern.services.accountQuotas.setLimits(account.account, { dailySegments: 20 });
    const resumed = await api(account, 'POST', `/v1/campaigns/${campaign}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.paused_reason).toBeNull();
    const finished = await campaignIn(account, campaign, 'finished');
    expect(finished.paused_reason).toBeNull();
    expect(await storedMessages(account)).toBe(8);
    expect(await usage(account)).toEqual({ today_segments: 8, month_segments: 8 });
  });

  it('holds the quota exactly with a campaign and single sends racing for it', async () => {
    const account = await accountWith({ dailySegments: 20 });
    const campaign = await campaignOf(
      account,
      Array.from({ length: 30 }, (_, i) => phone(200 + i)),
    );
    const [started, ...singles] = await Promise.all([
      api(account, 'POST', `/v1/campaigns/${campaign}/start`),
      ...Array.from({ length: 30 }, (_, i) => send(account, phone(300 + i))),
    ]);
    expect(started!.status).toBe(200);
    const paused = await campaignIn(account, campaign, 'paused');
    expect(paused.paused_reason).toBe('quota_exceeded');
    const admitted = singles.filter((answer) => answer.status === 202).length;
    const fromCampaign = await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } });
    expect(admitted + fromCampaign).toBe(20);
    expect(await storedMessages(account)).toBe(20);
    expect(await usage(account)).toEqual({ today_segments: 20, month_segments: 20 });
  });

  it('fails a contact outside the allowed countries with destination_not_allowed and counts it', async () => {
    const account = await accountWith({ allowedCountries: ['GB'] });
    const campaign = await campaignOf(account, ['447400123456', '12025550123', '447400123457']);
    expect((await api(account, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
    const finished = await campaignIn(account, campaign, 'finished');
    expect(finished.stats.failed).toBe(1);
    const failed = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign, status: 'failed' },
      select: { to: true, errorCode: true },
    });
    expect(failed).toEqual([{ to: '12025550123', errorCode: 'destination_not_allowed' }]);
    expect(await usage(account)).toEqual({ today_segments: 2, month_segments: 2 });
    // It tells of its failure as any failed message does, so a webhook hears of it.
    const told = await t.tern.deps.prisma.event.findMany({
      where: { campaignId: campaign, type: 'message.failed' },
      select: { payload: true },
    });
    expect(told.map((event) => event.payload)).toEqual([
      expect.objectContaining({
        event: 'message.failed',
        to: '12025550123',
        status: 'failed',
        error: { code: 'destination_not_allowed', message: 'The account may not send to this country' },
      }),
    ]);
  });
});

describe('the day in the quota’s time zone', () => {
  it('gives a message back to the day it was reserved in, not to the day it is cancelled on', async () => {
    const account = await accountWith({ dailySegments: 2 });
    const sendAt = new Date(t.clock.now().getTime() + 3 * 86_400_000).toISOString();
    const scheduled = await api(account, 'POST', '/v1/messages/send', {
      to: phone(1),
      message: ONE_SEGMENT,
      send_at: sendAt,
    });
    expect(scheduled.status).toBe(202);
    t.clock.advance(86_400_000);
    const tomorrow = await t.login(account);
    expect((await send(tomorrow, phone(2))).status).toBe(202);
    expect((await send(tomorrow, phone(3))).status).toBe(202);
    expect((await send(tomorrow, phone(4))).status).toBe(429);
    const cancelled = await api(tomorrow, 'POST', `/v1/messages/${scheduled.body.message}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((await usage(tomorrow)).today_segments).toBe(2);
    expect((await send(tomorrow, phone(5))).status).toBe(429);
  });

  it('starts a new day at midnight in Tokyo, and Retry-After counts to it', async () => {
    const account = await accountWith({ dailySegments: 2, timezone: 'Asia/Tokyo' });
    // Move the clock to 90 seconds before the next midnight in Tokyo (UTC+9, no daylight saving).
    const now = t.clock.now().getTime();
    const tokyoMidnight = Math.ceil((now + 9 * 3_600_000) / 86_400_000) * 86_400_000 - 9 * 3_600_000;
    t.clock.advance(tokyoMidnight - 90_000 - now);
    expect((await send(account, phone(1))).status).toBe(202);
    expect((await send(account, phone(2))).status).toBe(202);
    const refused = await send(account, phone(3));
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(89);
    expect(retryAfter).toBeLessThanOrEqual(91);
    t.clock.advance(retryAfter * 1000);
    expect((await send(account, phone(4))).status).toBe(202);
    const { today_segments } = await usage(account);
    expect(today_segments).toBe(1);
  });
});
