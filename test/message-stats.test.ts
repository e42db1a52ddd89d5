import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;

const STATS = `query ($from: DateTime, $to: DateTime, $interval: StatsInterval, $campaign: ID, $groupBy: [StatsGroup!]) {
  messageStats(from: $from, to: $to, interval: $interval, campaign: $campaign, groupBy: $groupBy) {
    __typename
    ... on MessageStats { from to timezone interval
      buckets { start campaignId country carrier messages segments delivered failed replies optOuts scheduled queued sent cancelled }
      totals { start campaignId country carrier messages segments delivered failed replies optOuts scheduled queued sent cancelled } }
    ... on ValidationError { details { field issue } }
    ... on NotFoundError { code }
  }
}`;

const TIMES = `query ($from: DateTime!, $to: DateTime!, $campaign: ID) {
  deliveryTimes(from: $from, to: $to, campaign: $campaign) {
    ... on DeliveryTimes { delivered p50 p90 p99 }
  }
}`;

beforeAll(async () => {
  // No workers: the test plays the carriers, so it decides who took each message and what became of it.
  // A statistics budget for the reads this file makes, which only stats-fairness.test.ts holds to the default.
  t = await startTern({ role: 'api', env: { STATS_BUDGET: '100000' } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  await setTimezone(alice, 'America/New_York');
  await setTimezone(bob, 'Asia/Kolkata');
});
afterAll(() => t.stop());

async function setTimezone(account: TestAccount, timezone: string) {
  await t.tern.deps.prisma.accountSettings.upsert({
    where: { accountId: account.account },
    create: { accountId: account.account, timezone },
    update: { timezone },
  });
}

function setClock(iso: string) {
  t.clock.advance(new Date(iso).getTime() - t.clock.now().getTime());
}

/** Sends at the given time, with a token of that time (a token from another day is refused). */
async function sendAt(account: TestAccount, iso: string, body: Record<string, unknown>): Promise<string> {
  setClock(iso);
  const { token } = await t.login(account);
  const response = await t.request('POST', '/v1/messages/send', { token, body });
  expect(response.status).toBe(202);
  return response.body.message;
}

async function createCampaign(account: TestAccount): Promise<string> {
  const id = newId('cmp');
  await t.tern.deps.prisma.campaign.create({
    data: { id, accountId: account.account, name: `Campaign ${id}` },
  });
  return id;
}

const report = (carrier: string, message: string, status: 'delivered' | 'failed', at: string) =>
  t.tern.services.carrierReports.applyDeliveryReport(carrier, {
    carrierMessageId: `${carrier}-${message}`,
    reference: message,
    status,
    at: new Date(at),
  });

const reply = (to: string, message: string, text: string, at: string) =>
  t.tern.services.carrierReports.recordInbound('carrier-a', {
    carrierMessageId: `reply-${randomUUID()}`,
    from: to,
    to: null,
    text,
    at: new Date(at),
    inReplyTo: message,
  });

async function stats(account: TestAccount, variables: Record<string, unknown>) {
  const { token } = await t.login(account);
  const response = await t.graphql(STATS, variables, token);
  expect(response.status).toBe(200);
  return response.body.data.messageStats;
}

type Counted = Record<string, number | string | null>;

/** The same numbers counted from the messages themselves, per local day and group. */
async function countedFromMessages(account: TestAccount, timezone: string): Promise<Counted[]> {
  const rows = await t.tern.deps.prisma.$queryRawUnsafe<Counted[]>(
    `SELECT ((m.created_at AT TIME ZONE $2)::date::timestamp AT TIME ZONE $2) AS start, m.campaign_id AS "campaignId",
       m.country, m.carrier, count(*)::int AS messages, sum(m.segments)::int AS segments,
       (count(*) FILTER (WHERE m.status = 'delivered'))::int AS delivered,
       (count(*) FILTER (WHERE m.status = 'failed'))::int AS failed,
       (count(*) FILTER (WHERE m.status = 'queued'))::int AS queued,
       (count(*) FILTER (WHERE m.status = 'scheduled'))::int AS scheduled,
       (count(*) FILTER (WHERE m.status = 'cancelled'))::int AS cancelled
     FROM messages m WHERE m.account_id = $1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
    account.account,
    timezone,
  );
  return rows.map((row) => ({ ...row, start: new Date(row.start as unknown as Date).toISOString() }));
}

/** The columns countedFromMessages gives. */
const COUNTED_COLUMNS = [
  'start',
  'campaignId',
  'country',
  'carrier',
  'messages',
  'segments',
  'delivered',
  'failed',
  'queued',
  'scheduled',
  'cancelled',
] as const;

/** An account's answer split by everything, in the columns countedFromMessages gives. */
async function splitByEverything(account: TestAccount, range: Record<string, unknown>): Promise<Counted[]> {
  const answer = await stats(account, { ...range, groupBy: ['STATUS', 'CAMPAIGN', 'COUNTRY', 'CARRIER'] });
  return answer.buckets
    .filter((row: Counted) => (row.messages as number) > 0)
    .map((row: Counted) => Object.fromEntries(COUNTED_COLUMNS.map((column) => [column, row[column]])));
}

const inOneOrder = (rows: Counted[]) =>
  rows
    .map((row) => JSON.stringify(row, Object.keys(row).sort()))
    .sort()
    .map((row) => JSON.parse(row));

/** The messages the mixed run sent, by account. */
const runs: Record<string, { phones: string[]; ids: string[] }> = {};

describe('messageStats after a mixed run', () => {
  beforeAll(async () => {
    for (const [account, prefix] of [
      [alice, '1202555'],
      [bob, '91987654'],
    ] as const) {
      const campaigns = [await createCampaign(account), await createCampaign(account)];
      const ids: string[] = [];
      const phones: string[] = [];
      for (let index = 0; index < 12; index++) {
        const to =
          index % 3 === 0
            ? `5511987${prefix.slice(-3)}${String(index).padStart(3, '0')}`
            : `${prefix}${String(index).padStart(4, '0')}`;
        const day = 1 + (index % 3);
        const hour = String((index * 5) % 24).padStart(2, '0');
        const campaign = index % 4 === 3 ? null : campaigns[index % 2];
        const message = index % 2 === 0 ? 'Hello' : 'Ünïcode ✓ text that is long enough'.repeat(3);
        ids.push(
          await sendAt(account, `2026-06-0${day}T${hour}:10:00Z`, {
            to,
            message,
            ...(campaign ? { campaign } : {}),
          }),
        );
        phones.push(to);
      }
      // Two carriers, deliveries and failures; some left queued.
      for (let index = 0; index < 8; index++) {
        const carrier = index % 2 === 0 ? 'carrier-a' : 'carrier-b';
        await report(carrier, ids[index]!, index % 5 === 4 ? 'failed' : 'delivered', '2026-06-04T00:00:00Z');
      }
      await reply(phones[0]!, ids[0]!, 'Thanks', '2026-06-04T01:00:00Z');
      await reply(phones[1]!, ids[1]!, 'STOP', '2026-06-04T01:05:00Z');
      await reply(phones[1]!, ids[1]!, 'STOP', '2026-06-04T01:06:00Z');
      runs[account.account] = { phones, ids };
    }
  });

  it.each([
    ['alice', () => alice, 'America/New_York'],
    ['bob', () => bob, 'Asia/Kolkata'],
  ])(
    'equal counting the messages of %s, per local day, campaign, country and carrier',
    async (_name, who, zone) => {
      const account = who();
      const range = { from: '2026-05-31T00:00:00Z', to: '2026-06-05T00:00:00Z', interval: 'DAY' };
      expect((await stats(account, range)).timezone).toBe(zone);
      const counted = await countedFromMessages(account, zone);
      const messageRows = await splitByEverything(account, range);
      expect(inOneOrder(messageRows)).toEqual(inOneOrder(counted));
      expect(new Set(counted.map((row) => row.carrier))).toEqual(new Set(['carrier-a', 'carrier-b', null]));
      expect(new Set(counted.map((row) => row.country))).toContain('BR');
    },
  );

  it('counts a repeated group once, through /v1 and GraphQL', async () => {
    const range = 'from=2026-05-31T00:00:00Z&to=2026-06-05T00:00:00Z&interval=DAY';
    for (const [repeated, once] of [
      ['CAMPAIGN,STATUS,CAMPAIGN', 'CAMPAIGN,STATUS'],
      ['CARRIER,CARRIER', 'CARRIER'],
      ['COUNTRY,CARRIER,COUNTRY,CARRIER', 'COUNTRY,CARRIER'],
    ]) {
      const twice = await t.request('GET', `/v1/stats/messages?${range}&group_by=${repeated}`, {
        token: alice.token,
      });
      expect(twice.status, repeated).toBe(200);
      const single = await t.request('GET', `/v1/stats/messages?${range}&group_by=${once}`, {
        token: alice.token,
      });
      expect({ ...twice.body, request: null }).toEqual({ ...single.body, request: null });
      expect(twice.body.buckets.length).toBeGreaterThan(0);
      const graphql = await stats(alice, {
        from: '2026-05-31T00:00:00Z',
        to: '2026-06-05T00:00:00Z',
        groupBy: repeated!.split(','),
      });
      expect(graphql.__typename, repeated).toBe('MessageStats');
      expect(graphql.totals.length).toBe(single.body.totals.length);
    }
  });

  it('takes /v1 values in lower case, as every other /v1 value is, and upper case still', async () => {
    const range = 'from=2026-05-31T00:00:00Z&to=2026-06-05T00:00:00Z';
    const lower = await t.request(
      'GET',
      `/v1/stats/messages?${range}&interval=hour&group_by=status,country`,
      {
        token: alice.token,
      },
    );
    expect(lower.status).toBe(200);
    const upper = await t.request(
      'GET',
      `/v1/stats/messages?${range}&interval=HOUR&group_by=STATUS,COUNTRY`,
      {
        token: alice.token,
      },
    );
    expect({ ...lower.body, request: null }).toEqual({ ...upper.body, request: null });
    expect(lower.body.buckets.some((row: Counted) => row.country === 'BR' && row.queued !== null)).toBe(true);
    for (const group of ['carrier', 'campaign']) {
      const split = await t.request('GET', `/v1/stats/messages?${range}&group_by=${group}`, {
        token: alice.token,
      });
      expect(split.status, group).toBe(200);
    }
    const wrong = await t.request('GET', `/v1/stats/messages?${range}&interval=week`, { token: alice.token });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toContain('one of: day, hour');
  });

  it('counts replies and new opt-outs where they arrived, and the totals add the buckets up', async () => {
    const answer = await stats(alice, { from: '2026-05-31T00:00:00Z', to: '2026-06-05T00:00:00Z' });
    expect(answer.totals).toHaveLength(1);
    const [totals] = answer.totals;
    expect(totals).toMatchObject({
      start: null,
      messages: 12,
      delivered: 7,
      failed: 1,
      replies: 3,
      optOuts: 1,
    });
    const sum = (field: string) =>
      answer.buckets.reduce((total: number, row: Counted) => total + (row[field] as number), 0);
    for (const field of ['messages', 'segments', 'delivered', 'failed', 'replies', 'optOuts'])
      expect(sum(field)).toBe(totals[field]);
    const replyDay = answer.buckets.find((row: Counted) => (row.replies as number) > 0);
    // 01:00Z on June 4 is still June 3 in New York.
    expect(replyDay).toMatchObject({ start: '2026-06-03T04:00:00.000Z', replies: 3, optOuts: 1 });
    expect(await t.tern.deps.prisma.inboundMessage.count({ where: { accountId: alice.account } })).toBe(3);
  });

  it('answers zero totals for a range without messages, split by status or not', async () => {
    for (const groupBy of [[], ['STATUS']]) {
      const answer = await stats(alice, {
        from: '2020-01-01T00:00:00Z',
        to: '2020-01-02T00:00:00Z',
        groupBy,
      });
      expect(answer.buckets).toEqual([]);
      expect(answer.totals).toEqual([expect.objectContaining({ start: null, messages: 0, delivered: 0 })]);
    }
  });

  it("never shows another account's numbers", async () => {
    const answer = await stats(bob, {
      from: '2026-05-31T00:00:00Z',
      to: '2026-06-05T00:00:00Z',
      groupBy: ['CAMPAIGN'],
    });
    const aliceCampaigns = await t.tern.deps.prisma.campaign.findMany({
      where: { accountId: alice.account },
    });
    for (const row of [...answer.buckets, ...answer.totals])
      expect(aliceCampaigns.map((campaign) => campaign.id)).not.toContain(row.campaignId);
    const total = answer.totals.reduce((sum: number, row: Counted) => sum + (row.messages as number), 0);
    expect(total).toBe(12);
    const [campaign] = aliceCampaigns;
    const other = await stats(bob, {
      from: '2026-05-31T00:00:00Z',
      to: '2026-06-05T00:00:00Z',
      campaign: campaign!.id,
    });
    expect(other).toMatchObject({ __typename: 'NotFoundError' });
  });

  it('gives delivery time percentiles from acceptance to the report', async () => {
    const response = await t.graphql(
      TIMES,
      { from: '2026-05-31T00:00:00Z', to: '2026-06-05T00:00:00Z' },
      alice.token,
    );
    const times = response.body.data.deliveryTimes;
    expect(times.delivered).toBe(7);
    const delays = (
      await t.tern.deps.prisma.message.findMany({ where: { accountId: alice.account, status: 'delivered' } })
    )
      .map((m) => (m.deliveredAt!.getTime() - m.createdAt.getTime()) / 1000)
      .sort((a, b) => a - b);
    const median = delays[Math.ceil(delays.length / 2) - 1]!;
    expect(Math.abs(times.p50 - median) / median).toBeLessThan(0.05);
    expect(Math.abs(times.p99 - delays.at(-1)!) / delays.at(-1)!).toBeLessThan(0.05);
  });
});

describe('buckets of the account time zone', () => {
  it("start a day at the account's midnight", async () => {
    const account = await t.createAccount();
    await setTimezone(account, 'Asia/Kolkata');
    // 18:29Z is 23:59 in Kolkata (+05:30); 18:30Z is the next day's midnight.
    await sendAt(account, '2026-07-01T18:29:00Z', { to: '919876500001', message: 'late' });
    await sendAt(account, '2026-07-01T18:30:00Z', { to: '919876500002', message: 'early' });
    const answer = await stats(account, { from: '2026-07-01T12:00:00Z', to: '2026-07-02T12:00:00Z' });
    expect(answer.from).toBe('2026-06-30T18:30:00.000Z');
    expect(answer.to).toBe('2026-07-02T18:30:00.000Z');
    expect(answer.buckets.map((row: Counted) => [row.start, row.messages])).toEqual([
      ['2026-06-30T18:30:00.000Z', 1],
      ['2026-07-01T18:30:00.000Z', 1],
    ]);
  });

  it('has 23 hours on the day New York springs forward, and two 01:00 hours when it falls back', async () => {
    const account = await t.createAccount();
    await setTimezone(account, 'America/New_York');
    await sendAt(account, '2026-03-08T06:59:00Z', { to: '12025550101', message: '01:59 EST' });
    await sendAt(account, '2026-03-08T07:00:00Z', { to: '12025550102', message: '03:00 EDT' });
    await sendAt(account, '2026-11-01T05:30:00Z', { to: '12025550103', message: '01:30 EDT' });
    await sendAt(account, '2026-11-01T06:30:00Z', { to: '12025550104', message: '01:30 EST' });
    const spring = await stats(account, {
      from: '2026-03-08T05:00:00Z',
      to: '2026-03-09T04:00:00Z',
      interval: 'HOUR',
    });
    expect(spring.buckets.map((row: Counted) => row.start)).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T07:00:00.000Z',
    ]);
    const springDays = await stats(account, { from: '2026-03-08T05:00:00Z', to: '2026-03-09T04:00:00Z' });
    expect(springDays.buckets).toEqual([
      expect.objectContaining({ start: '2026-03-08T05:00:00.000Z', messages: 2 }),
    ]);
    expect(springDays.to).toBe('2026-03-09T04:00:00.000Z');
    const fall = await stats(account, {
      from: '2026-11-01T04:00:00Z',
      to: '2026-11-02T05:00:00Z',
      interval: 'HOUR',
    });
    expect(fall.buckets.map((row: Counted) => [row.start, row.messages])).toEqual([
      ['2026-11-01T05:00:00.000Z', 1],
      ['2026-11-01T06:00:00.000Z', 1],
    ]);
    const fallDays = await stats(account, { from: '2026-11-01T04:00:00Z', to: '2026-11-02T05:00:00Z' });
    expect(fallDays.buckets).toEqual([
      expect.objectContaining({ start: '2026-11-01T04:00:00.000Z', messages: 2 }),
    ]);
  });

  it('keeps hours of a zone 45 minutes off the hour', async () => {
    const account = await t.createAccount();
    await setTimezone(account, 'Asia/Kathmandu');
    // Kathmandu is +05:45: its 10:00 is 04:15Z.
    await sendAt(account, '2026-07-01T04:14:00Z', { to: '9779801234567', message: '09:59' });
    await sendAt(account, '2026-07-01T04:15:00Z', { to: '9779801234568', message: '10:00' });
    const answer = await stats(account, {
      from: '2026-07-01T03:00:00Z',
      to: '2026-07-01T06:00:00Z',
      interval: 'HOUR',
    });
    expect(answer.buckets.map((row: Counted) => [row.start, row.messages])).toEqual([
      ['2026-07-01T03:15:00.000Z', 1],
      ['2026-07-01T04:15:00.000Z', 1],
    ]);
  });
});

describe('bounds', () => {
  it.each([
    ['401 days', { from: '2025-01-01T00:00:00Z', to: '2026-02-06T00:00:00Z' }, 'to', 'range_too_long'],
    [
      'a range that ends before it starts',
      { from: '2026-02-06T00:00:00Z', to: '2026-02-05T00:00:00Z' },
      'to',
      'range_too_long',
    ],
    [
      '1,001 hours',
      { from: '2026-01-01T00:00:00Z', to: '2026-02-11T17:00:00Z', interval: 'HOUR' },
      'interval',
      'too_many_buckets',
    ],
  ])('refuses %s with 422', async (_case, query, field, issue) => {
    const response = await t.request('GET', `/v1/stats/messages?${new URLSearchParams(query)}`, {
      token: alice.token,
    });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ code: 'validation_error', details: [{ field, issue }] });
    const answer = await stats(alice, query);
    expect(answer).toMatchObject({ __typename: 'ValidationError' });
  });

  it('answers 400 days, and 1,000 hours', async () => {
    const days = await t.request(
      'GET',
      '/v1/stats/messages?from=2025-01-01T00:00:00Z&to=2026-02-05T00:00:00Z',
      {
        token: alice.token,
      },
    );
    expect(days.status).toBe(200);
    // New York is UTC-5 in winter: 05:00Z is a whole local hour, so the range is not widened.
    const hours = await t.request(
      'GET',
      '/v1/stats/messages?from=2026-01-01T05:00:00Z&to=2026-02-11T21:00:00Z&interval=HOUR&group_by=COUNTRY,CARRIER',
      { token: alice.token },
    );
    expect(hours.status).toBe(200);
    expect(hours.body).toMatchObject({ interval: 'HOUR', timezone: 'America/New_York', buckets: [] });
  });
});

/** A subscription over server-sent events, read as a browser's EventSource would. */
async function subscribe(token: string, query: string) {
  const abort = new AbortController();
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const updates: any[] = [];
  const reading = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: '' }));
      if (chunk.done) return;
      buffered += chunk.value;
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const data = buffered
          .slice(0, end)
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('');
        buffered = buffered.slice(end + 2);
        if (data) updates.push(JSON.parse(data));
      }
    }
  })();
  return {
    updates,
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

async function untilSubscribed(account: TestAccount) {
  const redis = new Redis(REDIS_URL);
  try {
    await waitFor(async () => {
      const [, count] = (await redis.pubsub('NUMSUB', `${t.redisPrefix}:live:${account.account}`)) as [
        string,
        number,
      ];
      return count > 0 ? true : null;
    });
  } finally {
    redis.disconnect();
  }
}

describe('messageStatsChanged', () => {
  it('tells a dashboard its numbers changed, one update for a burst of changes', async () => {
    const account = await t.createAccount();
    setClock(new Date().toISOString());
    const { token } = await t.login(account);
    const stream = await subscribe(token, 'subscription { messageStatsChanged { at } }');
    await untilSubscribed(account);
    const sends = Array.from({ length: 30 }, (_, index) =>
      t.request('POST', '/v1/messages/send', {
        token,
        body: { to: `3519100${String(index).padStart(5, '0')}`, message: 'Hi' },
      }),
    );
    expect((await Promise.all(sends)).every((sent) => sent.status === 202)).toBe(true);
    await waitFor(() => Promise.resolve(stream.updates.length > 0 ? true : null));
    const answer = await stats(account, {});
    expect(answer.totals[0].messages).toBe(30);
    await stream.close();
    expect(stream.updates[0].data.messageStatsChanged.at).toEqual(expect.any(String));
    // Thirty sends, a few updates: the changes of each second make one.
    expect(stream.updates.length).toBeLessThan(30);
  });

  it("refuses another account's campaign", async () => {
    const campaign = await createCampaign(alice);
    const { token } = await t.login(bob);
    const response = await t.graphql(
      `subscription { messageStatsChanged(campaign: "${campaign}") { at } }`,
      {},
      token,
    );
    expect(JSON.stringify(response.body)).toMatch(/not_found|NotFound|No such|not found/i);
  });
});

describe('settled statistics', () => {
  const RANGE = { from: '2026-05-25T00:00:00Z', to: '2026-06-08T00:00:00Z', interval: 'DAY' };
  const QUERIES: [string, Record<string, unknown>][] = [
    ['unsplit', {}],
    ['by status', { groupBy: ['STATUS'] }],
    ['by country', { groupBy: ['COUNTRY'] }],
    ['by carrier', { groupBy: ['CARRIER'] }],
    ['by campaign', { groupBy: ['CAMPAIGN'] }],
    ['by country and carrier', { groupBy: ['COUNTRY', 'CARRIER', 'STATUS'] }],
  ];

  /** Every query's answer, and the answers narrowed to each of alice's campaigns with messages. */
  async function answers(): Promise<Record<string, unknown>> {
    const campaigns = await t.tern.deps.prisma.campaign.findMany({
      where: { accountId: alice.account, messages: { some: {} } },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    expect(campaigns.length).toBeGreaterThan(1);
    const { token } = await t.login(alice);
    const reads = QUERIES.flatMap(([name, variables]) => [
      [name, { ...RANGE, ...variables }] as const,
      ...campaigns.map(({ id }) => [`${name} of ${id}`, { ...RANGE, ...variables, campaign: id }] as const),
    ]);
    const read: Record<string, unknown> = {};
    for (const [name, variables] of reads) {
      const answer = (await t.graphql(STATS, variables, token)).body.data.messageStats;
      expect(answer.__typename, name).toBe('MessageStats');
      expect(answer.totals.length, name).toBeGreaterThan(0);
      read[name] = answer;
    }
    return read;
  }

  const rowsIn = async (table: string) =>
    (
      await t.tern.deps.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`,
        alice.account,
      )
    )[0]?.n;

  it('answers every read as before once its quarter-hours have moved, and a late change to a settled one', async () => {
    setClock('2026-12-01T00:00:00Z');
    const before = await answers();
    expect(await t.tern.services.statsSettler.settle()).toBeGreaterThan(0);
    expect(await rowsIn('message_stats')).toBe(0);
    expect(await rowsIn('settled_message_stat_splits')).toBeGreaterThan(0);
    expect(await answers()).toEqual(before);

    // A receipt for a message of a settled quarter-hour adds to message_stats again; reads add both.
    const { ids } = runs[alice.account]!;
    const late = ids[ids.length - 1]!;
    expect((await t.tern.deps.prisma.message.findUniqueOrThrow({ where: { id: late } })).status).toBe(
      'queued',
    );
    await report('carrier-b', late, 'delivered', '2026-12-01T00:00:00Z');
    expect(await rowsIn('message_stats')).toBeGreaterThan(0);
    const afterReceipt = await answers();
    expect(afterReceipt).not.toEqual(before);
    expect(inOneOrder(await splitByEverything(alice, RANGE))).toEqual(
      inOneOrder(await countedFromMessages(alice, 'America/New_York')),
    );

    await t.tern.services.statsSettler.settle();
    expect(await rowsIn('message_stats')).toBe(0);
    expect(await answers()).toEqual(afterReceipt);
  });

  it('skips the rows a statement holds rather than wait for it, and moves them on the next run', async () => {
    const account = await t.createAccount();
    await sendAt(account, '2026-06-01T10:00:00Z', { to: '12025550188', message: 'Held' });
    setClock('2026-12-01T00:00:00Z');
    const client = await t.tern.deps.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM message_stats WHERE account_id = ${account.account} FOR UPDATE`;
      // The settle runs on its own connections while this transaction holds the account's rows.
      await t.tern.services.statsSettler.settle();
      return tx.$queryRaw<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM message_stats WHERE account_id = ${account.account}`;
    });
    expect(client[0]?.n).toBe(1);
    await t.tern.services.statsSettler.settle();
    const left = await t.tern.deps.prisma.messageStat.count({ where: { accountId: account.account } });
    expect(left).toBe(0);
    expect((await stats(account, { ...RANGE, groupBy: ['COUNTRY'] })).totals).toEqual([
      expect.objectContaining({ country: 'US', messages: 1 }),
    ]);
  });

  it('loses and doubles nothing when receipts for settled quarter-hours arrive while it runs', async () => {
    setClock('2026-12-01T00:00:00Z');
    const { ids } = runs[bob.account]!;
    const queued = await t.tern.deps.prisma.message.findMany({
      where: { id: { in: ids }, status: 'queued' },
      select: { id: true },
    });
    expect(queued.length).toBeGreaterThan(1);
    const settler = t.tern.services.statsSettler;
    await Promise.all([
      ...queued.map(({ id }, index) =>
        report(index % 2 ? 'carrier-a' : 'carrier-b', id, 'delivered', '2026-12-01T00:00:00Z'),
      ),
      settler.settle(() => false, 1),
      settler.settle(() => false, 1),
    ]);
    await settler.settle();
    const left = await t.tern.deps.prisma.messageStat.count({ where: { accountId: bob.account } });
    expect(left).toBe(0);
    const rows = await splitByEverything(bob, RANGE);
    expect(inOneOrder(rows)).toEqual(inOneOrder(await countedFromMessages(bob, 'Asia/Kolkata')));
    expect(rows.some((row: Counted) => row.queued !== 0)).toBe(false);
  });
});
