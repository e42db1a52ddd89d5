import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { FRAUD_RULES, ServiceUnavailableError } from '../src/errors.js';
import { newId } from '../src/lib/ids.js';
import { FraudGuard } from '../src/modules/fraud-guard/fraud-guard.js';
import { GuardRuleBook } from '../src/modules/fraud-guard/guard-rules.js';
import { GuardWindows } from '../src/modules/fraud-guard/guard-windows.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { freePort, runCliCommand, startRedisServer } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// The fraud guard against SMS pumping: flood limits per number, velocity per number range, caps
// per country with blocks, monitor mode; refusals before any segment is reserved.

let t: TestTern;
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  });
  // The deployment's defaults (6 identical or 20 texts per number, 50 per number range, an
  // hour), which the harness turns off for every other file.
  const defaults = loadConfig({}).fraudGuard;
  t = await startTern({
    env: {
      SIMULATOR_DELAY_MS: '20',
      FRAUD_FLOOD_IDENTICAL: String(defaults.floodIdentical),
      FRAUD_FLOOD_MAX: String(defaults.floodAny),
      FRAUD_VELOCITY_MAX: String(defaults.velocity),
    },
    logger: pino({ level: 'info' }, sink),
  });
});
afterAll(() => t.stop());

const sendWith = (token: string, to: string, message: string) =>
  t.request('POST', '/v1/messages/send', { token, body: { to, message } });

/** Runs the tasks, `width` at a time, keeping their order in the answer. */
async function inParallel<T>(tasks: (() => Promise<T>)[], width = 50): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane));
  return results;
}

const cliEnv = () => ({
  DATABASE_URL: t.database.url,
  DIRECT_DATABASE_URL: t.database.directUrl,
  REDIS_PREFIX: t.redisPrefix,
  LOG_LEVEL: 'warn',
});

const stored = (account: TestAccount, where: Record<string, unknown> = {}) =>
  t.tern.deps.prisma.message.count({ where: { accountId: account.account, ...where } });

const decisions = (account: TestAccount) =>
  t.tern.deps.prisma.fraudGuardCount.findMany({
    where: { accountId: account.account },
    select: { rule: true, country: true, decision: true, count: true },
    orderBy: [{ rule: 'asc' }, { decision: 'asc' }],
  });

/** A Brazilian mobile: range `r` (the number less its last 4 digits), line `line` within it. */
const brazil = (range: number, line: number) =>
  `55119${String(range).padStart(4, '0')}${String(line).padStart(4, '0')}`;

async function apiKeys(account: TestAccount, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const created = await t.tern.services.apiKeys.create(account.account, { name: `bot ${i}` }, 'operator');
      return created.key;
    }),
  );
}

describe('the deployment’s defaults', () => {
  it('are 6 identical or 20 texts per number and 50 per number range an hour, block mode, let through without Redis', () => {
    expect(loadConfig({}).fraudGuard).toEqual({
      floodIdentical: 6,
      floodAny: 20,
      velocity: 50,
      countryCaps: {},
      coolOffSeconds: 3600,
      mode: 'block',
      whenRedisDown: 'allow',
    });
    expect(loadConfig({ FRAUD_COUNTRY_CAPS: 'ng=100/1000, GB=/50' }).fraudGuard.countryCaps).toEqual({
      NG: { hourly: 100, daily: 1000 },
      GB: { hourly: null, daily: 50 },
    });
    expect(() => loadConfig({ FRAUD_COUNTRY_CAPS: 'NG=1000001/' })).toThrow(/FRAUD_COUNTRY_CAPS/);
    expect(() => loadConfig({ FRAUD_VELOCITY_MAX: '100001' })).toThrow(/FRAUD_VELOCITY_MAX/);
  });
});

describe('a pumping burst into one number range', () => {
  it('is cut at the velocity limit (50 an hour) while 1,000 sends to ordinary numbers of the country all pass', async () => {
    const account = await t.createAccount();
    const keys = await apiKeys(account, 20);
    const pumped: (() => Promise<{ status: number; body: any }>)[] = [];
    const ordinary: (() => Promise<{ status: number; body: any }>)[] = [];
    for (let i = 0; i < 1000; i++) {
      pumped.push(() => sendWith(keys[i % 20]!, brazil(8765, i), `Your code is ${1000 + i}`));
      ordinary.push(() => sendWith(keys[(i + 7) % 20]!, brazil(i, 4321), `Your code is ${1000 + i}`));
    }
    // Interleaved, over a minute of Tern's clock.
    const tasks = pumped.flatMap((task, i) => [
      async () => {
        if (i % 100 === 0) t.clock.advance(6_000);
        return task();
      },
      ordinary[i]!,
    ]);
    const answers = await inParallel(tasks);
    const pumpedAnswers = answers.filter((_, i) => i % 2 === 0);
    const ordinaryAnswers = answers.filter((_, i) => i % 2 === 1);
    expect(ordinaryAnswers.filter((answer) => answer.status === 202)).toHaveLength(1000);
    expect(pumpedAnswers.filter((answer) => answer.status === 202)).toHaveLength(50);
    const refused = pumpedAnswers.filter((answer) => answer.status === 422);
    expect(refused).toHaveLength(950);
    expect(refused[0]!.body.error).toMatchObject({
      code: 'fraud_blocked',
      details: [{ field: 'to', issue: 'velocity_range' }],
    });
    expect(await stored(account, { to: { startsWith: '551198765' } })).toBe(50);
    expect(await stored(account)).toBe(1050);
    expect(await decisions(account)).toEqual([
      { rule: 'velocity_range', country: 'BR', decision: 'blocked', count: 950 },
    ]);
    const metric = await t.tern.deps.metrics.fraudBlocked.get();
    const velocity = metric.values.find((value) => value.labels.rule === 'velocity_range');
    expect(velocity?.value).toBeGreaterThanOrEqual(950);
  }, 120_000);

  it('passes an hour later: the window slides', async () => {
    const account = await t.createAccount();
    const sends = (from: number) =>
      inParallel(
        Array.from({ length: 60 }, (_, i) => () => sendWith(account.token, brazil(4242, from + i), 'Hello')),
      );
    expect((await sends(0)).filter((answer) => answer.status === 202)).toHaveLength(50);
    t.clock.advance(30 * 60_000);
    expect((await sends(100)).filter((answer) => answer.status === 202)).toHaveLength(0);
    t.clock.advance(30 * 60_000 + 1);
    expect((await sends(200)).filter((answer) => answer.status === 202)).toHaveLength(50);
  });
});

describe('monitor mode', () => {
  it('sends every message of the burst and records the would-be refusals', async () => {
    const account = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(account.account, { mode: 'monitor' });
    const answers = await inParallel(
      Array.from({ length: 200 }, (_, i) => () => sendWith(account.token, brazil(7000, i), 'Your code is 1')),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(200);
    expect(await stored(account)).toBe(200);
    expect(await decisions(account)).toEqual([
      { rule: 'velocity_range', country: 'BR', decision: 'monitored', count: 150 },
    ]);
    const read = await t.graphql(
      `{ fraudDecisions(days: 1) { ... on FraudDecisions { rows { day rule country decision count } truncated
        totalsByRule { rule blocked monitored } totalsByCountry { country blocked monitored } } } }`,
      {},
      account.token,
    );
    expect(read.body.data.fraudDecisions).toEqual({
      rows: [
        {
          day: t.clock.now().toISOString().slice(0, 10),
          rule: 'velocity_range',
          country: 'BR',
          decision: 'monitored',
          count: 150,
        },
      ],
      truncated: false,
      totalsByRule: [{ rule: 'velocity_range', blocked: 0, monitored: 150 }],
      totalsByCountry: [{ country: 'BR', blocked: 0, monitored: 150 }],
    });
    const tooLong = await t.graphql('{ fraudDecisions(days: 93) { __typename } }', {}, account.token);
    expect(tooLong.body.data.fraudDecisions.__typename).toBe('ValidationError');
    const lines = logged.filter((line) => line.account === account.account && line.rule === 'velocity_range');
    expect(lines).toHaveLength(150);
    expect(String(lines[0]!.msg)).toContain('monitor mode');
  });
});

describe('decisions over more rows than an answer holds', () => {
  const DAY_MS = 86_400_000;
  const countries = ['BR', 'NG', 'ID', 'GB', 'PT', ''];
  const read = async (account: TestAccount, days: number) =>
    (
      await t.graphql(
        `query($days: Int) { fraudDecisions(days: $days) { ... on FraudDecisions {
          rows { day rule country decision count } truncated
          totalsByRule { rule blocked monitored } totalsByCountry { country blocked monitored } } } }`,
        { days },
        account.token,
      )
    ).body.data.fraudDecisions;
  type Total = { blocked: number; monitored: number };
  /** The totals as a map by key (a null country as 'null'), having checked that the most come first. */
  const byKey = (totals: (Total & Record<string, unknown>)[], key: string) => {
    const sums = totals.map((total) => total.blocked + total.monitored);
    expect(sums).toEqual([...sums].sort((a, b) => b - a));
    return Object.fromEntries(
      totals.map((total) => [String(total[key]), { blocked: total.blocked, monitored: total.monitored }]),
    );
  };
  const sumBy = (
    rows: { rule: string; country: string; decision: string; count: number }[],
    keyOf: (row: (typeof rows)[number]) => string,
  ) => {
    const totals: Record<string, Total> = {};
    for (const row of rows) {
      const total = totals[keyOf(row)] ?? { blocked: 0, monitored: 0 };
      total[row.decision as keyof Total] += row.count;
      totals[keyOf(row)] = total;
    }
    return totals;
  };

  it('answers exact totals by rule and country for a quarter of 6,480 rows, and the newest 500 rows with today first', async () => {
    const account = await t.createAccount();
    const today = Date.parse(t.clock.now().toISOString().slice(0, 10));
    // 92 days of every rule in six countries, both decisions: the two oldest days are before the quarter.
    const seeded = Array.from({ length: 92 }, (_, age) => age).flatMap((age) =>
      FRAUD_RULES.flatMap((rule, r) =>
        countries.flatMap((country, c) =>
          (['blocked', 'monitored'] as const).map((decision) => ({
            accountId: account.account,
            day: new Date(today - age * DAY_MS),
            age,
            rule,
            country,
            decision,
            count: 1 + ((age * 5 + r * 7 + c * 3) % 13) + (decision === 'monitored' ? 20 : 0),
          })),
        ),
      ),
    );
    await t.tern.deps.prisma.fraudGuardCount.createMany({ data: seeded.map(({ age: _, ...row }) => row) });
    const quarter = seeded.filter((row) => row.age < 90);
    expect(quarter.length).toBe(6480);

    const answer = await read(account, 90);
    expect(byKey(answer.totalsByRule, 'rule')).toEqual(sumBy(quarter, (row) => row.rule));
    expect(byKey(answer.totalsByCountry, 'country')).toEqual(
      sumBy(quarter, (row) => (row.country === '' ? 'null' : row.country)),
    );
    expect(answer.truncated).toBe(true);
    expect(answer.rows).toHaveLength(500);
    const days = answer.rows.map((row: { day: string }) => row.day);
    expect(days).toEqual([...days].sort().reverse());
    const todays = answer.rows.filter((row: { day: string }) => row.day === days[0]);
    expect(days[0]).toBe(new Date(today).toISOString().slice(0, 10));
    expect(todays).toHaveLength(FRAUD_RULES.length * countries.length * 2);
    // Each row as stored.
    type Row = { day: string; rule: string; country: string | null; decision: string; count: number };
    const keyOf = (row: Omit<Row, 'count'>) =>
      [row.day, row.rule, row.country || null, row.decision].join(' ');
    const stored = new Map(
      seeded.map((row) => [keyOf({ ...row, day: row.day.toISOString().slice(0, 10) }), row.count]),
    );
    expect(answer.rows.map((row: Row) => stored.get(keyOf(row)))).toEqual(
      answer.rows.map((row: Row) => row.count),
    );

    const lastDay = await read(account, 1);
    expect(lastDay.truncated).toBe(false);
    expect(lastDay.rows).toHaveLength(todays.length);
    const todaySeeded = seeded.filter((row) => row.age === 0);
    expect(byKey(lastDay.totalsByRule, 'rule')).toEqual(sumBy(todaySeeded, (row) => row.rule));
  });
});

describe('flood limits per number', () => {
  it('stores exactly 20 of 50 parallel sends to one number, exactly 6 of 10 identical ones', async () => {
    const account = await t.createAccount();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => sendWith(account.token, brazil(1, 1), `Message ${i}`)),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(20);
    const refused = answers.filter((answer) => answer.status === 422);
    expect(refused).toHaveLength(30);
    expect(refused.every((answer) => answer.body.error.details[0].issue === 'flood_number')).toBe(true);
    expect(await stored(account, { to: brazil(1, 1) })).toBe(20);

    const identical = await Promise.all(
      Array.from({ length: 10 }, () => sendWith(account.token, brazil(2, 2), 'Same text')),
    );
    expect(identical.filter((answer) => answer.status === 202)).toHaveLength(6);
    expect(identical.filter((answer) => answer.status === 422)[0]!.body.error.details).toEqual([
      { field: 'to', issue: 'flood_identical' },
    ]);
  });

  it('takes an account’s own flood limit (exactly 3 of 10 parallel), and GraphQL answers FraudBlockedError', async () => {
    const account = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(account.account, { floodAny: 3 });
    const query = `mutation($input: SendMessageInput!) { sendMessage(input: $input) {
      __typename ... on MessageAcceptance { id } ... on FraudBlockedError { code details { field issue } } } }`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.graphql(query, { input: { to: brazil(3, 3), message: `Hello ${i}` } }, account.token),
      ),
    );
    const results = answers.map((answer) => answer.body.data.sendMessage);
    expect(results.filter((result) => result.__typename === 'MessageAcceptance')).toHaveLength(3);
    expect(results.find((result) => result.__typename === 'FraudBlockedError')).toEqual({
      __typename: 'FraudBlockedError',
      code: 'fraud_blocked',
      details: [{ field: 'to', issue: 'flood_number' }],
    });
    expect(await stored(account)).toBe(3);
  });

  it('does not charge refused sends against the quota', async () => {
    const account = await t.createAccount();
    await t.tern.services.accountQuotas.setLimits(account.account, { dailySegments: 25 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sendWith(account.token, brazil(4, 4), `Message ${i}`)),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(20);
    expect(answers.filter((answer) => answer.status === 422)).toHaveLength(10);
    const more = await Promise.all(
      Array.from({ length: 5 }, (_, i) => sendWith(account.token, brazil(5 + i, 5), 'Hello')),
    );
    expect(more.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);
    const settings = await t.request('GET', '/v1/settings', { token: account.token });
    expect(settings.body.usage.today_segments).toBe(25);
    expect((await sendWith(account.token, brazil(99, 5), 'Hello')).body.error.code).toBe('quota_exceeded');
  });
});

describe('rules changed from another process', () => {
  it('apply within a second and one more send, read in the background while the account sends; after 10 s idle, before the send', async () => {
    const account = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(account.account, { floodAny: 2 });
    // What the CLI does from its own process: this one learns of it only by reading again.
    const changeBehindItsBack = (floodAny: number) =>
      t.tern.deps.prisma.fraudGuardRule.update({ where: { accountId: account.account }, data: { floodAny } });
    const status = async (i: number) => (await sendWith(account.token, brazil(7, 7), `Hello ${i}`)).status;
    const floodAnyNow = async () => (await t.tern.services.fraudGuard.view(account.account)).rules.floodAny;

    expect([await status(1), await status(2), await status(3)]).toEqual([202, 202, 422]);
    await changeBehindItsBack(100);
    expect(await status(4)).toBe(422);
    t.clock.advance(2_000);
    // Past a second the kept rules still answer at once, and a read starts beside the send.
    expect(await status(5)).toBe(422);
    await waitFor(async () => ((await floodAnyNow()) === 100 ? true : null));
    expect(await status(6)).toBe(202);

    await changeBehindItsBack(2);
    t.clock.advance(11_000);
    // Idle past ten seconds: the send waits for the read rather than take rules that old.
    expect(await status(7)).toBe(422);
  });
});

describe('country caps', () => {
  it('block the country at the cap, send account.country_blocked once, and end after the cool-off', async () => {
    const account = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(account.account, {
      countryCaps: { BR: { hourly: 10, daily: null } },
      coolOffSeconds: 600,
    });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sendWith(account.token, brazil(100 + i, 1), 'Hello')),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(10);
    const issues = answers
      .filter((answer) => answer.status === 422)
      .map((a) => a.body.error.details[0].issue);
    expect(issues).toHaveLength(20);
    expect(new Set(issues)).toEqual(new Set(['country_hourly', 'country_blocked']));
    expect(issues.filter((issue) => issue === 'country_hourly')).toHaveLength(1);
    // Another country goes on.
    expect((await sendWith(account.token, '447700900123', 'Hello')).status).toBe(202);
    const events = await t.tern.deps.prisma.event.findMany({
      where: { accountId: account.account, type: 'account.country_blocked' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      event: 'account.country_blocked',
      country: 'BR',
      rule: 'country_hourly',
    });
    // Blocked though the hourly window has room again, until the cool-off ends.
    t.clock.advance(61 * 60_000);
    expect((await sendWith(account.token, brazil(200, 1), 'Hello')).status).toBe(202);
    expect(
      await t.tern.deps.prisma.event.count({
        where: { accountId: account.account, type: 'account.country_blocked' },
      }),
    ).toBe(1);
  });

  it('keep blocking during the cool-off; the operator lifts the block with the CLI', async () => {
    const account = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(account.account, {
      countryCaps: { BR: { hourly: 3, daily: null } },
    });
    for (let i = 0; i < 4; i++) await sendWith(account.token, brazil(300 + i, 1), 'Hello');
    t.clock.advance(30 * 60_000);
    expect((await sendWith(account.token, brazil(310, 1), 'Hello')).body.error.details[0].issue).toBe(
      'country_blocked',
    );
    const run = await runCliCommand(
      ['accounts', 'guard', '--email', account.email, '--unblock', 'BR'],
      cliEnv(),
    );
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout.trim());
    expect(printed).toMatchObject({ unblocked: 'BR', was_blocked: true, blocked: {}, mode: 'block' });
    expect(printed.country_caps).toEqual({ BR: { hourly: 3, daily: null } });
    expect((await sendWith(account.token, brazil(311, 1), 'Hello')).status).toBe(202);
  });
});

describe('accounts guard (CLI)', () => {
  it('sets the rules, shows them, and refuses a malformed cap without changing anything', async () => {
    const account = await t.createAccount();
    const env = cliEnv();
    const set = await runCliCommand(
      [
        'accounts',
        'guard',
        '--email',
        account.email,
        '--flood',
        '4/10',
        '--velocity',
        '30',
        '--country-cap',
        'NG=5/50,GB=/100',
        '--mode',
        'monitor',
      ],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout.trim())).toMatchObject({
      account: account.account,
      mode: 'monitor',
      flood_identical: 4,
      flood_any: 10,
      velocity: 30,
      country_caps: { NG: { hourly: 5, daily: 50 }, GB: { hourly: null, daily: 100 } },
      cool_off_seconds: 3600,
      blocked: {},
    });
    const bad = await runCliCommand(
      ['accounts', 'guard', '--email', account.email, '--country-cap', 'XX=1/2'],
      env,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('XX');
    const tooBig = await runCliCommand(
      ['accounts', 'guard', '--email', account.email, '--velocity', '1000001'],
      env,
    );
    expect(tooBig.code).not.toBe(0);
    const shown = await runCliCommand(['accounts', 'guard', '--email', account.email], env);
    expect(JSON.parse(shown.stdout.trim())).toMatchObject({
      velocity: 30,
      mode: 'monitor',
      decisions: [],
      decisions_truncated: false,
    });
  }, 60_000);
});

describe('campaigns', () => {
  it('fail the messages the guard refuses with fraud_blocked, uncharged', async () => {
    const account = await t.createAccount();
    const template = await t.request('POST', '/v1/templates', {
      token: account.token,
      body: { name: 'Code', content: 'Your code is 42' },
    });
    const created = await t.request('POST', '/v1/campaigns', {
      token: account.token,
      body: { name: 'Pumped', template: template.body.template, batch_size: 100 },
    });
    const campaign = created.body.campaign;
    await t.tern.deps.prisma.contact.createMany({
      data: Array.from({ length: 80 }, (_, i) => ({
        id: newId('cnt'),
        accountId: account.account,
        campaignId: campaign,
        phone: brazil(6000, i),
        createdAt: new Date(Date.now() + i),
      })),
    });
    expect(
      (await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token })).status,
    ).toBe(200);
    const finished = await waitFor(async () => {
      const read = await t.request('GET', `/v1/campaigns/${campaign}`, { token: account.token });
      return read.body.status === 'finished' ? read.body : null;
    }, 20_000);
    expect(finished.stats.contacts).toBe(80);
    const failed = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign, status: 'failed' },
      select: { errorCode: true },
    });
    expect(failed).toHaveLength(30);
    expect(failed.every((message) => message.errorCode === 'fraud_blocked')).toBe(true);
    const settings = await t.request('GET', '/v1/settings', { token: account.token });
    expect(settings.body.usage.today_segments).toBe(50);
  });
});

describe('with Redis unavailable', () => {
  async function guardWithoutRedis(whenRedisDown: 'allow' | 'refuse', lines: Record<string, unknown>[]) {
    const defaults = { ...loadConfig({}).fraudGuard, whenRedisDown };
    // Nothing listens on port 1: every command fails at once.
    const redis = new Redis({
      port: 1,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    redis.on('error', () => undefined);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const guard = new FraudGuard({
      prisma: t.tern.deps.prisma,
      redis,
      prefix: t.redisPrefix,
      clock: t.clock,
      metrics: t.tern.deps.metrics,
      logger: pino({ level: 'warn' }, sink),
      rules: new GuardRuleBook(t.tern.deps.prisma, t.clock, defaults),
      defaults,
    });
    return { guard, close: () => redis.disconnect() };
  }

  it('lets sends through by default, counted in a metric and logged once', async () => {
    const account = await t.createAccount();
    const lines: Record<string, unknown>[] = [];
    const { guard, close } = await guardWithoutRedis('allow', lines);
    const before = (await t.tern.deps.metrics.fraudUnchecked.get()).values.find(
      (v) => v.labels.outcome === 'allowed',
    );
    for (let i = 0; i < 30; i++)
      expect(
        await guard.check({ id: newId('msg'), accountId: account.account, to: brazil(1, 1), text: 'x' }),
      ).toBe(null);
    close();
    const after = (await t.tern.deps.metrics.fraudUnchecked.get()).values.find(
      (v) => v.labels.outcome === 'allowed',
    );
    expect((after?.value ?? 0) - (before?.value ?? 0)).toBe(30);
    expect(lines.filter((line) => String(line.msg).includes('fraud guard cannot count'))).toHaveLength(1);
  });

  it('refuses with 503 when FRAUD_WHEN_REDIS_DOWN=refuse', async () => {
    const account = await t.createAccount();
    const { guard, close } = await guardWithoutRedis('refuse', []);
    await expect(
      guard.check({ id: newId('msg'), accountId: account.account, to: brazil(1, 1), text: 'x' }),
    ).rejects.toBeInstanceOf(ServiceUnavailableError);
    close();
  });
});

describe('the script by its digest', () => {
  it('is sent in full when Redis does not know it yet (a fresh or restarted server), then by digest', async () => {
    const server = await startRedisServer(await freePort());
    const redis = new Redis(server.url);
    try {
      const windows = new GuardWindows(redis, 'digest');
      const limits = {
        floodIdentical: 0,
        floodAny: 1,
        velocity: 0,
        countryHourly: 0,
        countryDaily: 0,
        country: '',
        coolOffMs: 1000,
        monitor: false,
      };
      const message = (id: string) => ({ id, accountId: 'acc', to: brazil(9, 1), text: 'Hi' });
      expect(await windows.check(message('m1'), limits, t.clock.now())).toEqual({
        rule: null,
        blockedUntil: null,
      });
      expect((await windows.check(message('m2'), limits, t.clock.now())).rule).toBe('flood_number');
      const stats = await redis.info('commandstats');
      expect(stats).toMatch(/cmdstat_eval:calls=1,/);
      expect(stats).toMatch(/cmdstat_evalsha:calls=2,.*failed_calls=1/);
      // Checks made at once share a call per account, each account's windows its own: two go
      // alone (two calls in flight), the next four together: one call for each account's two.
      const verdicts = await Promise.all(
        ['acc2', 'acc3', 'acc2', 'acc3', 'acc2', 'acc3'].map((accountId, i) =>
          windows.check({ ...message(`n${i}`), accountId }, limits, t.clock.now()),
        ),
      );
      expect(verdicts.map((verdict) => verdict.rule)).toEqual([
        null,
        null,
        'flood_number',
        'flood_number',
        'flood_number',
        'flood_number',
      ]);
      expect(await redis.info('commandstats')).toMatch(/cmdstat_evalsha:calls=6,/);
    } finally {
      redis.disconnect();
      await server.handle.stop('SIGTERM');
    }
  });
});
