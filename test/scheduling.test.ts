import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from './support/clock.js';
import { sql } from './support/database.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
  alice = await t.createAccount();
});

afterAll(async () => {
  await t?.stop();
});

/** Moves a clock to an absolute time (forward only, as time goes). */
function setClock(clock: ManualClock, at: string): void {
  const delta = new Date(at).getTime() - clock.now().getTime();
  if (delta < 0) throw new Error(`the clock is already past ${at}`);
  clock.advance(delta);
}

const inMinutes = (minutes: number) => new Date(t.clock.now().getTime() + minutes * 60_000).toISOString();

async function send(account: TestAccount, body: Record<string, unknown>) {
  return t.request('POST', '/v1/messages/send', { token: account.token, body });
}

async function messageOf(account: TestAccount, id: string) {
  return (await t.request('GET', `/v1/messages/${id}`, { token: account.token })).body;
}

async function statusOf(account: TestAccount, id: string): Promise<string> {
  return (await messageOf(account, id)).status;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One round of the release loop at the clock's time, as the worker's loop runs it: what it leaves
 * scheduled, the loop would have left too. A positive step, not a wait that hopes the loop ran.
 */
const releaseRound = () => t.tern.services.scheduledReleases.releaseDue();

describe('a scheduled single send', () => {
  it('waits as scheduled, then is released at its send_at and delivered', async () => {
    const sendAt = inMinutes(10);
    const accepted = await send(alice, { to: '5511999991001', message: 'Later', send_at: sendAt });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'scheduled', send_at: new Date(sendAt).toISOString() });
    const stored = await messageOf(alice, accepted.body.message);
    expect(stored).toMatchObject({
      status: 'scheduled',
      send_at: new Date(sendAt).toISOString(),
      expires_at: new Date(new Date(sendAt).getTime() + 86_400_000).toISOString(),
    });

    t.clock.advance(9 * 60_000);
    await releaseRound();
    expect(await statusOf(alice, accepted.body.message)).toBe('scheduled');

    t.clock.advance(61_000);
    await waitFor(async () => ((await statusOf(alice, accepted.body.message)) === 'delivered' ? true : null));
  });

  it('is cancelled while scheduled, never sent, and 409 invalid_state once cancelled or on its way', async () => {
    const accepted = await send(alice, { to: '5511999991002', message: 'Never', send_at: inMinutes(60) });
    const cancelled = await t.request('POST', `/v1/messages/${accepted.body.message}/cancel`, {
      token: alice.token,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ message: accepted.body.message, status: 'cancelled' });
    expect(cancelled.body.cancelled_at).toEqual(expect.any(String));

    t.clock.advance(2 * 60 * 60_000);
    await releaseRound();
    expect(await messageOf(alice, accepted.body.message)).toMatchObject({
      status: 'cancelled',
      sent_at: null,
    });

    const again = await t.request('POST', `/v1/messages/${accepted.body.message}/cancel`, {
      token: alice.token,
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');

    const now = await send(alice, { to: '5511999991003', message: 'Now' });
    const late = await t.request('POST', `/v1/messages/${now.body.message}/cancel`, { token: alice.token });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('invalid_state');
  });

  it('ends cancelled xor sent when the cancellation races the release, 100 times', async () => {
    const sendAt = inMinutes(1);
    const ids: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const accepted = await send(alice, {
        to: `55119999920${String(i).padStart(2, '0')}`,
        message: 'Race',
        send_at: sendAt,
      });
      ids.push(accepted.body.message);
    }
    t.clock.advance(61_000);
    // A round of the release run by hand, while the cancels arrive 1 ms apart (the worker's own
    // loop may run too): the race is met at once, not left to the loop's timer.
    const released = releaseRound();
    const answers = await Promise.all(
      ids.map(async (id, index) => {
        await pause(index);
        return t.request('POST', `/v1/messages/${id}/cancel`, { token: alice.token });
      }),
    );
    await released;
    const final = await waitFor(async () => {
      const statuses = await Promise.all(ids.map((id) => statusOf(alice, id)));
      return statuses.some((status) => status === 'scheduled' || status === 'queued' || status === 'sent')
        ? null
        : statuses;
    }, 20_000);
    ids.forEach((id, index) => {
      const answer = answers[index]!;
      if (answer.status === 200) expect(final[index], id).toBe('cancelled');
      else {
        expect(answer.status, id).toBe(409);
        expect(final[index], id).toBe('delivered');
      }
    });
    const { rows: sentCancelled } = await sql(
      t.database.url,
      `SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status = 'cancelled' AND (sent_at IS NOT NULL OR claimed_at IS NOT NULL)`,
      [ids],
    );
    expect(sentCancelled[0].n).toBe(0);
  });

  it('respects the account’s send window when asked, and only then', async () => {
    const bob = await t.createAccount();
    // A minute on Mondays in Lisbon: now is outside it.
    const window = { days: ['mon'], start: '09:00', end: '09:01' };
    const patched = await t.request('PATCH', '/v1/settings', {
      token: bob.token,
      body: { timezone: 'Europe/Lisbon', send_window: window, message_validity: 600 },
    });
    expect(patched.body).toMatchObject({ send_window: window, message_validity: 600 });
    const held = await send(bob, { to: '5511999993001', message: 'Held', respect_send_window: true });
    expect(held.body.status).toBe('scheduled');
    const stored = await messageOf(bob, held.body.message);
    // It waits for Monday 09:00 in Lisbon, and its ten minutes of validity count from then.
    expect(held.body.waits_until).toBe(stored.waits_until);
    expect(new Date(stored.waits_until).getTime()).toBeGreaterThan(t.clock.now().getTime());
    expect(new Date(stored.expires_at).getTime() - new Date(stored.waits_until).getTime()).toBe(600_000);
    const free = await send(bob, { to: '5511999993002', message: 'Free' });
    expect(free.body.status).toBe('queued');
    expect(free.body).not.toHaveProperty('waits_until');
  });

  it('waits from Friday evening for Monday’s window without expiring, and shows when it will go', async () => {
    // Friday 2026-12-04, 20:00 UTC, with the default validity of a day.
    setClock(t.clock, '2026-12-04T20:00:00Z');
    const carol = await t.createAccount();
    await t.request('PATCH', '/v1/settings', {
      token: carol.token,
      body: {
        timezone: 'UTC',
        send_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' },
      },
    });
    const held = await send(carol, { to: '5511999993101', message: 'Weekend', respect_send_window: true });
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'scheduled', waits_until: '2026-12-07T09:00:00.000Z' });
    expect(await messageOf(carol, held.body.message)).toMatchObject({
      status: 'scheduled',
      send_at: null,
      waits_until: '2026-12-07T09:00:00.000Z',
      expires_at: '2026-12-08T09:00:00.000Z',
    });
    const graphql = await t.graphql(
      `{ message(id: "${held.body.message}") { ... on Message { waitsUntil expiresAt } } }`,
      {},
      carol.token,
    );
    expect(graphql.body.data.message).toEqual({
      waitsUntil: '2026-12-07T09:00:00.000Z',
      expiresAt: '2026-12-08T09:00:00.000Z',
    });

    // Saturday evening, a day after it was sent: it still waits.
    setClock(t.clock, '2026-12-05T20:30:00Z');
    await t.tern.services.scheduledReleases.releaseDue();
    expect(await statusOf(await t.login(carol), held.body.message)).toBe('scheduled');
    setClock(t.clock, '2026-12-07T09:00:30Z');
    const monday = await t.login(carol);
    await waitFor(async () => ((await statusOf(monday, held.body.message)) === 'delivered' ? true : null));
  });
});

describe('campaign messages and send windows', () => {
  async function campaignWith(account: TestAccount, fields: Record<string, unknown>) {
    const template = await t.request('POST', '/v1/templates', {
      token: account.token,
      body: { name: `Tpl ${Math.random()}`, content: 'Hi {{name}}' },
    });
    const campaign = await t.request('POST', '/v1/campaigns', {
      token: account.token,
      body: { name: 'Windowed', template: template.body.template, batch_size: 1000, ...fields },
    });
    expect(campaign.status).toBe(201);
    return campaign.body.campaign as string;
  }

  async function addContact(account: TestAccount, campaign: string, phone: string, timezone?: string) {
    const added = await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
      token: account.token,
      body: { phone, name: 'Contact', ...(timezone ? { timezone } : {}) },
    });
    expect(added.status).toBe(201);
  }

  async function messagesByStatus(campaign: string): Promise<Record<string, string[]>> {
    const { rows } = await sql(
      t.database.url,
      `SELECT m.status::text AS status, c.timezone FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE m.campaign_id = $1`,
      [campaign],
    );
    const byStatus: Record<string, string[]> = {};
    for (const row of rows) {
      byStatus[row.status] ??= [];
      byStatus[row.status]!.push(row.timezone);
    }
    for (const zones of Object.values(byStatus)) zones.sort();
    return byStatus;
  }

  it('releases each contact at its own local 09:00 across New York, London and Tokyo', async () => {
    const clock = t.clock;
    // A Saturday: a Monday-to-Friday window is closed everywhere.
    setClock(clock, '2027-01-02T12:00:00Z');
    const account = await t.login(alice);
    // Three days of validity: a message made on Saturday noon waits for Monday without expiring.
    const campaign = await campaignWith(account, {
      validity: 259_200,
      send_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '20:00' },
    });
    for (const [index, zone] of ['America/New_York', 'Europe/London', 'Asia/Tokyo'].entries()) {
      await addContact(account, campaign, `551199999400${index * 2}`, zone);
      await addContact(account, campaign, `551199999400${index * 2 + 1}`, zone);
    }
    await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
    // Logged in anew each time: the clock moves by days, past a token's lifetime.
    const campaignRead = async () =>
      (await t.request('GET', `/v1/campaigns/${campaign}`, { token: (await t.login(alice)).token })).body;
    // Every contact has its message, but none went: the campaign is still running, not finished.
    const waiting = await waitFor(async () => {
      const read = await campaignRead();
      return read.stats.waiting === 6 ? read : null;
    });
    expect(waiting.status).toBe('running');
    expect(waiting.stats).toMatchObject({ queued: 0, delivered: 0 });
    // Another dispatch of it (the release's, the recovery sweep's) finds messages waiting and leaves it running.
    await t.tern.services.campaignDispatch.dispatchBatch(campaign);
    expect((await campaignRead()).status).toBe('running');
    // Monday 09:00 in Tokyo is 00:00 UTC.
    setClock(clock, '2027-01-04T00:00:30Z');
    await waitFor(async () => {
      const byStatus = await messagesByStatus(campaign);
      return byStatus.delivered?.length === 2 ? byStatus : null;
    });
    expect(await messagesByStatus(campaign)).toEqual({
      delivered: ['Asia/Tokyo', 'Asia/Tokyo'],
      scheduled: ['America/New_York', 'America/New_York', 'Europe/London', 'Europe/London'],
    });
    // 09:00 in London is 09:00 UTC in winter; 09:00 in New York is 14:00 UTC.
    setClock(clock, '2027-01-04T08:59:00Z');
    await releaseRound();
    expect((await messagesByStatus(campaign)).scheduled).toHaveLength(4);
    setClock(clock, '2027-01-04T09:00:30Z');
    await waitFor(async () => ((await messagesByStatus(campaign)).scheduled?.length === 2 ? true : null));
    expect((await campaignRead()).status).toBe('running');
    setClock(clock, '2027-01-04T14:00:30Z');
    await waitFor(async () => ((await messagesByStatus(campaign)).delivered?.length === 6 ? true : null));
    // Its last waiting message went: it finishes.
    const finished = await waitFor(async () => {
      const read = await campaignRead();
      return read.status === 'finished' ? read : null;
    });
    expect(finished.stats).toMatchObject({ waiting: 0, delivered: 6 });
  });

  it('opens at the first minute that exists on the day New York’s clocks go forward', async () => {
    setClock(t.clock, '2027-03-13T12:00:00Z');
    const account = await t.login(alice);
    // 2027-03-14: 02:00 EST becomes 03:00 EDT (07:00 UTC); a 02:30 start does not exist.
    const campaign = await campaignWith(account, {
      send_window: { days: ['sun'], start: '02:30', end: '05:00' },
    });
    await addContact(account, campaign, '5511999995001', 'America/New_York');
    await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
    await waitFor(async () => ((await messagesByStatus(campaign)).scheduled?.length === 1 ? true : null));
    const [row] = (
      await sql(t.database.url, 'SELECT release_at FROM messages WHERE campaign_id = $1', [campaign])
    ).rows;
    expect(new Date(row.release_at).toISOString()).toBe('2027-03-14T07:00:00.000Z');
  });

  it('counts a waiting message’s validity from its window’s opening; held past it by a pause, it fails as expired', async () => {
    const account = await t.login(alice);
    const campaign = await campaignWith(account, {
      validity: 3600,
      send_window: { days: ['mon'], start: '09:00', end: '09:01' },
    });
    await addContact(account, campaign, '5511999996001', 'Pacific/Kiritimati');
    await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
    await waitFor(async () => ((await messagesByStatus(campaign)).scheduled?.length === 1 ? true : null));
    const [row] = (
      await sql(t.database.url, 'SELECT id, release_at, expires_at FROM messages WHERE campaign_id = $1', [
        campaign,
      ])
    ).rows;
    const opening = new Date(row.release_at).getTime();
    expect(new Date(row.expires_at).getTime() - opening).toBe(3600_000);
    expect((await messageOf(account, row.id)).waits_until).toBe(new Date(opening).toISOString());
    // An hour after it was made it still waits: the window is more than an hour away.
    t.clock.advance(3600_000 + 1000);
    expect(opening).toBeGreaterThan(t.clock.now().getTime());
    await t.tern.services.scheduledReleases.releaseDue();
    expect((await messageOf(account, row.id)).status).toBe('scheduled');

    // Paused over its opening, it is held until its validity runs out, then fails with its event.
    expect(
      (await t.request('POST', `/v1/campaigns/${campaign}/pause`, { token: account.token })).status,
    ).toBe(200);
    setClock(t.clock, new Date(opening + 30_000).toISOString());
    await t.tern.services.scheduledReleases.releaseDue();
    expect((await messageOf(await t.login(alice), row.id)).status).toBe('scheduled');
    setClock(t.clock, new Date(opening + 3600_000 + 1000).toISOString());
    const failed = await waitFor(async () => {
      const message = await messageOf(await t.login(alice), row.id);
      return message.status === 'failed' ? message : null;
    });
    expect(failed.error).toEqual({ code: 'expired', message: expect.any(String) });
    const { rows: events } = await sql(
      t.database.url,
      `SELECT payload FROM events WHERE message_id = $1 AND type = 'message.failed'`,
      [row.id],
    );
    expect(events[0].payload.error.code).toBe('expired');
  });

  it('keeps a campaign running while its message waits, and finishes it once a client cancels that message', async () => {
    const account = await t.login(alice);
    const opening = new Date(t.clock.now().getTime() + 2 * 60 * 60_000);
    const hh = (date: Date) => date.toISOString().slice(11, 16);
    const campaign = await campaignWith(account, {
      send_window: {
        days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        start: hh(opening),
        end: hh(new Date(opening.getTime() + 60 * 60_000)),
      },
    });
    await addContact(account, campaign, '5511999998101', 'UTC');
    await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
    await waitFor(async () => ((await messagesByStatus(campaign)).scheduled?.length === 1 ? true : null));
    const read = async () =>
      (await t.request('GET', `/v1/campaigns/${campaign}`, { token: account.token })).body;
    expect((await read()).status).toBe('running');
    const [row] = (await sql(t.database.url, 'SELECT id FROM messages WHERE campaign_id = $1', [campaign]))
      .rows;
    const cancelled = await t.request('POST', `/v1/messages/${row.id}/cancel`, { token: account.token });
    expect(cancelled.status).toBe(200);
    const finished = await waitFor(async () => {
      const now = await read();
      return now.status === 'finished' ? now : null;
    });
    expect(finished.stats.waiting).toBe(0);
  });

  it('holds waiting messages while the campaign is paused, releases them on resume, cancels them on cancel', async () => {
    const account = await t.login(alice);
    const start = new Date(t.clock.now());
    // A window that opens in two minutes, every day, in UTC.
    const opening = new Date(start.getTime() + 2 * 60_000);
    const hh = (date: Date) => date.toISOString().slice(11, 16);
    const window = {
      days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      start: hh(opening),
      end: hh(new Date(opening.getTime() + 3 * 60 * 60_000)),
    };
    // One contact per batch and a minute between batches: each stays running after its first batch.
    const running = { send_window: window, batch_size: 1, delay: 60 };
    const paused = await campaignWith(account, running);
    const cancelled = await campaignWith(account, running);
    for (const [campaign, phones] of [
      [paused, ['5511999997001', '5511999997002']],
      [cancelled, ['5511999997003', '5511999997004']],
    ] as const) {
      for (const phone of phones) await addContact(account, campaign, phone, 'UTC');
      await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
      await waitFor(async () => ((await messagesByStatus(campaign)).scheduled?.length === 1 ? true : null));
    }
    expect((await t.request('POST', `/v1/campaigns/${paused}/pause`, { token: account.token })).status).toBe(
      200,
    );
    expect(
      (await t.request('POST', `/v1/campaigns/${cancelled}/cancel`, { token: account.token })).status,
    ).toBe(200);
    expect(await messagesByStatus(cancelled)).toEqual({ cancelled: ['UTC'] });

    t.clock.advance(3 * 60_000);
    await releaseRound();
    expect(await messagesByStatus(paused)).toEqual({ scheduled: ['UTC'] });
    expect(await messagesByStatus(cancelled)).toEqual({ cancelled: ['UTC'] });
    const resumed = await t.request('POST', `/v1/campaigns/${paused}/resume`, { token: account.token });
    expect(resumed.status).toBe(200);
    // The message held while paused goes as soon as it is resumed (its window is open).
    await waitFor(async () => ((await messagesByStatus(paused)).delivered?.length === 1 ? true : null));
  });
});

describe('input', () => {
  it('refuses every new field it cannot take with a 422 naming it', async () => {
    const account = await t.login(alice);
    const cases: [string, string, Record<string, unknown>, string, string][] = [
      [
        'POST',
        '/v1/messages/send',
        { to: '5511999998001', message: 'x', send_at: 'tomorrow' },
        'send_at',
        'invalid_format',
      ],
      [
        'POST',
        '/v1/messages/send',
        { to: '5511999998001', message: 'x', send_at: '2020-01-01T00:00:00Z' },
        'send_at',
        'invalid_value',
      ],
      [
        'POST',
        '/v1/messages/send',
        {
          to: '5511999998001',
          message: 'x',
          send_at: new Date(t.clock.now().getTime() + 36 * 86_400_000).toISOString(),
        },
        'send_at',
        'invalid_value',
      ],
      [
        'POST',
        '/v1/messages/send',
        { to: '5511999998001', message: 'x', validity: 59 },
        'validity',
        'invalid_value',
      ],
      [
        'POST',
        '/v1/messages/send',
        { to: '5511999998001', message: 'x', validity: 259_201 },
        'validity',
        'invalid_value',
      ],
      [
        'POST',
        '/v1/messages/send',
        { to: '5511999998001', message: 'x', respect_send_window: 'yes' },
        'respect_send_window',
        'invalid_value',
      ],
      [
        'PATCH',
        '/v1/settings',
        { send_window: { days: [], start: '09:00', end: '17:00' } },
        'send_window.days',
        'too_short',
      ],
      [
        'PATCH',
        '/v1/settings',
        { send_window: { days: ['mon'], start: '9am', end: '17:00' } },
        'send_window.start',
        'invalid_format',
      ],
      [
        'PATCH',
        '/v1/settings',
        { send_window: { days: ['someday'], start: '09:00', end: '17:00' } },
        'send_window.days.0',
        'invalid_value',
      ],
      [
        'PATCH',
        '/v1/settings',
        { send_window: { days: ['mon'], start: '09:00', end: '09:00' } },
        'send_window.end',
        'invalid_value',
      ],
      ['PATCH', '/v1/settings', { message_validity: 0 }, 'message_validity', 'invalid_value'],
      ['POST', '/v1/campaigns', { name: 'x', validity: 10 }, 'validity', 'invalid_value'],
    ];
    for (const [method, path, body, field, issue] of cases) {
      const answer = await t.request(method, path, { token: account.token, body });
      expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(422);
      expect(answer.body.error.details, `${path} ${JSON.stringify(body)}`).toContainEqual({ field, issue });
    }
    const campaign = await t.request('POST', '/v1/campaigns', {
      token: account.token,
      body: { name: 'Zones' },
    });
    const contact = await t.request('POST', `/v1/campaigns/${campaign.body.campaign}/contacts`, {
      token: account.token,
      body: { phone: '5511999998002', timezone: 'Mars/Olympus' },
    });
    expect(contact.status).toBe(422);
    expect(contact.body.error.details).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
  });
});
