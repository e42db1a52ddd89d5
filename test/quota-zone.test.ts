import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

// The zone quota days and months are counted in is the operator's, fixed with the limits: an
// account changing its own time zone moves neither its day nor its month.

let t: TestTern;

beforeAll(async () => {
  t = await startTern();
});
afterAll(() => t.stop());

const HOUR = 3_600_000;
// Local dates 26 hours apart: at every instant the two zones are on different days.
const ZONES = ['Pacific/Kiritimati', 'Etc/GMT+12'];

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

const send = (account: TestAccount, i: number) =>
  api(account, 'POST', '/v1/messages/send', { to: `5511987${String(i).padStart(6, '0')}`, message: 'Hi' });

const storedMessages = (account: TestAccount) =>
  t.tern.deps.prisma.message.count({ where: { accountId: account.account } });

/**
 * Checks that a send was refused at the quota with a Retry-After of `seconds`: what was left to
 * the boundary when the clock was moved, less the few the requests since took.
 */
function expectRefusedFor(answer: { status: number; headers: Headers; body: any }, seconds: number): void {
  expect(answer.status).toBe(429);
  expect(answer.body.error.code).toBe('quota_exceeded');
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeLessThanOrEqual(seconds);
  expect(retryAfter).toBeGreaterThan(seconds - 10);
}

/** Moves the injected clock to `at`. */
function moveClockTo(at: number): void {
  t.clock.advance(at - t.clock.now().getTime());
}

/** Fills the quota, then flips the account's zone 10 times, sending after each flip, while the clock crosses `boundary`. */
async function flipAround(
  created: TestAccount,
  limit: number,
  boundary: number,
): Promise<{ account: TestAccount; statuses: number[] }> {
  moveClockTo(boundary - 2 * HOUR);
  // A login token of before the move may have expired by the moved clock.
  const account = await t.login(created);
  for (let i = 0; i < limit; i++) expect((await send(account, i)).status).toBe(202);
  const statuses: number[] = [];
  for (let flip = 0; flip < 10; flip++) {
    // Ten steps of 10 minutes, up to 20 minutes before the boundary.
    moveClockTo(boundary - 2 * HOUR + (flip + 1) * 10 * 60_000);
    const zone = ZONES[flip % 2];
    expect((await api(account, 'PATCH', '/v1/settings', { timezone: zone })).status).toBe(200);
    statuses.push((await send(account, 100 + flip)).status);
  }
  return { account, statuses };
}

describe('a tenant flipping its time zone', () => {
  it('stores exactly the daily limit around the end of a UTC day, and Retry-After counts to it', async () => {
    const created = await t.createAccount();
    await t.tern.services.accountQuotas.setLimits(created.account, { dailySegments: 10 });
    const now = t.clock.now().getTime();
    const midnight = Math.ceil((now + 3 * HOUR) / (24 * HOUR)) * 24 * HOUR;
    const { account, statuses } = await flipAround(created, 10, midnight);
    expect(statuses).toEqual(Array(10).fill(429));
    expect(await storedMessages(account)).toBe(10);
    // 20 minutes before the quota zone's (UTC's) midnight, whatever the account's zone says.
    expectRefusedFor(await send(account, 200), 20 * 60);
    const settings = await api(account, 'GET', '/v1/settings');
    expect(settings.body.limits.timezone).toBe('UTC');
    expect(settings.body.usage).toEqual({ today_segments: 10, month_segments: 10 });
  });

  it('stores exactly the monthly limit around the end of a UTC month', async () => {
    const created = await t.createAccount();
    await t.tern.services.accountQuotas.setLimits(created.account, { monthlySegments: 10 });
    const now = new Date(t.clock.now().getTime() + 3 * HOUR);
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const { account, statuses } = await flipAround(created, 10, nextMonth);
    expect(statuses).toEqual(Array(10).fill(429));
    expect(await storedMessages(account)).toBe(10);
    expectRefusedFor(await send(account, 200), 20 * 60);
  });

  it('counts in the zone the operator names with the limits, and a new day there has room again', async () => {
    const created = await t.createAccount();
    const limits = await t.tern.services.accountQuotas.setLimits(created.account, {
      dailySegments: 1,
      timezone: 'Asia/Tokyo',
    });
    expect(limits.timezone).toBe('Asia/Tokyo');
    // Tokyo is UTC+9 without daylight saving: its midnight is 15:00 UTC.
    const now = t.clock.now().getTime();
    const tokyoMidnight = Math.ceil((now + 9 * HOUR) / (24 * HOUR)) * 24 * HOUR - 9 * HOUR;
    moveClockTo(tokyoMidnight - 90_000);
    const account = await t.login(created);
    expect((await send(account, 1)).status).toBe(202);
    expect((await api(account, 'PATCH', '/v1/settings', { timezone: 'Pacific/Kiritimati' })).status).toBe(
      200,
    );
    expectRefusedFor(await send(account, 2), 90);
    moveClockTo(tokyoMidnight);
    expect((await send(account, 3)).status).toBe(202);
    // A later change of the other limits keeps the zone.
    const changed = await t.tern.services.accountQuotas.setLimits(account.account, { dailySegments: 5 });
    expect(changed.timezone).toBe('Asia/Tokyo');
    const graphql = await t.graphql(
      '{ settings { limits { timezone } usage { todaySegments } } }',
      {},
      account.token,
    );
    expect(graphql.body.data.settings).toEqual({
      limits: { timezone: 'Asia/Tokyo' },
      usage: { todaySegments: 1 },
    });
  });

  it('is fixed by the first change of the limits, not by a look at them', async () => {
    const account = await t.createAccount();
    const limits = t.tern.services.accountQuotas;
    expect((await limits.setLimits(account.account, {})).timezone).toBe('UTC');
    expect((await api(account, 'PATCH', '/v1/settings', { timezone: 'Asia/Tokyo' })).status).toBe(200);
    expect((await limits.setLimits(account.account, {})).timezone).toBe('Asia/Tokyo');
    expect((await limits.setLimits(account.account, { dailySegments: 3 })).timezone).toBe('Asia/Tokyo');
    expect((await api(account, 'PATCH', '/v1/settings', { timezone: 'UTC' })).status).toBe(200);
    expect((await api(account, 'GET', '/v1/settings')).body.limits.timezone).toBe('Asia/Tokyo');
  });
});

describe('a reservation dated before the quota day already counted', () => {
  it('counts in that later day: a process whose clock lags at midnight cannot start the day again', async () => {
    const created = await t.createAccount();
    await t.tern.services.accountQuotas.setLimits(created.account, { dailySegments: 3 });
    const now = t.clock.now().getTime();
    const midnight = Math.ceil((now + 3 * HOUR) / (24 * HOUR)) * 24 * HOUR;
    moveClockTo(midnight + 5 * 60_000);
    const account = await t.login(created);
    for (let i = 0; i < 3; i++) expect((await send(account, 300 + i)).status).toBe(202);
    // A lagging clock still on the day before: the later day's count holds.
    moveClockTo(midnight - 5 * 60_000);
    expect((await send(account, 310)).status).toBe(429);
    moveClockTo(midnight + 6 * 60_000);
    expect((await send(account, 311)).status).toBe(429);
    expect(await storedMessages(account)).toBe(3);
  });
});
