import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolTiers, spread } from '../src/modules/senders/sender-choice.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliOn } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Sender pools, sticky senders and the countries' sender rules: which sender a message goes from
// when it names none, and what a country refuses.

let t: TestTern;

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
});
afterAll(() => t?.stop());

const DAY_MS = 24 * 60 * 60 * 1000;
const POOL = ['447700900001', '447700900002', '447700900003'];

const cli = (...args: string[]) => runCliOn(t, args);

const approve = (account: TestAccount, sender: string, ...options: string[]) =>
  t.tern.services.accountSenders.add(account.account, {
    sender,
    pool: options.includes('pool'),
    ...(options.includes('gb') ? { countries: ['GB'] } : {}),
  });

async function accountWithPool(senders: readonly string[] = POOL): Promise<TestAccount> {
  const account = await t.createAccount();
  for (const sender of senders) await approve(account, sender, 'pool');
  return account;
}

const send = (account: TestAccount, body: Record<string, unknown>) =>
  t.request('POST', '/v1/messages/send', { token: account.token, body: { message: 'Hello', ...body } });

/** The sender a send without `from` was given, as its answer shows it. */
async function senderOf(account: TestAccount, to: string): Promise<string> {
  const accepted = await send(account, { to });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  return accepted.body.from;
}

const recipient = (i: number) => `4477009${String(10000 + i).padStart(5, '0')}`;

describe('a sender pool', () => {
  it('gives one recipient the same number every time, also to sends made at once', async () => {
    const account = await accountWithPool();
    const first = await senderOf(account, '447700911111');
    expect(POOL).toContain(first);
    expect(await senderOf(account, '447700911111')).toBe(first);
    const racing = await Promise.all(Array.from({ length: 8 }, () => senderOf(account, '447700922222')));
    expect(new Set(racing).size).toBe(1);
    // The message shows it at once, as it was accepted.
    const accepted = await send(account, {
      to: '447700922222',
      send_at: new Date(Date.now() + DAY_MS).toISOString(),
    });
    expect(accepted.body).toMatchObject({ status: 'scheduled', from: racing[0] });
    const shown = await t.request('GET', `/v1/messages/${accepted.body.message}`, { token: account.token });
    expect(shown.body.from).toBe(racing[0]);
  });

  it('spreads 100 recipients over every number of the pool', async () => {
    const account = await accountWithPool();
    const senders: string[] = [];
    for (let batch = 0; batch < 100; batch += 20)
      senders.push(
        ...(await Promise.all(Array.from({ length: 20 }, (_, i) => senderOf(account, recipient(batch + i))))),
      );
    const counts = new Map<string, number>();
    for (const sender of senders) counts.set(sender, (counts.get(sender) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(POOL);
    for (const count of counts.values()) expect(count).toBeGreaterThan(10);
  });

  it('never uses a sender again once it left the pool, nor a mapping to it', async () => {
    const account = await accountWithPool();
    const before = await Promise.all(
      Array.from({ length: 30 }, (_, i) => senderOf(account, recipient(200 + i))),
    );
    const removed = before[0]!;
    // Out of the pool but still approved: a `from` may name it, the pool no longer gives it.
    await approve(account, removed);
    const after = await Promise.all(
      Array.from({ length: 30 }, (_, i) => senderOf(account, recipient(200 + i))),
    );
    expect(after).not.toContain(removed);
    // The recipients that had the others keep theirs.
    after.forEach((sender, i) => {
      if (before[i] !== removed) expect(sender).toBe(before[i]);
    });
    await t.tern.services.accountSenders.remove(account.account, after[0]!);
    const rest = await Promise.all(
      Array.from({ length: 30 }, (_, i) => senderOf(account, recipient(200 + i))),
    );
    expect(new Set(rest)).toEqual(new Set(POOL.filter((s) => s !== removed && s !== after[0])));
  });

  it('keeps a recipient’s sender for 30 days from its last use, then chooses afresh', async () => {
    const account = await accountWithPool();
    const grown = [...POOL, '447700900004'].sort();
    // A recipient the grown pool would give another number than the one it got first.
    const to = Array.from({ length: 200 }, (_, i) => recipient(400 + i)).find((candidate) => {
      const pick = (pool: string[]) => {
        const { preferred } = poolTiers(
          pool.map((sender) => ({ sender, countries: [] })),
          'GB',
        );
        return preferred[spread(candidate, preferred.length)];
      };
      return pick(POOL) !== pick(grown);
    })!;
    const first = await senderOf(account, to);
    await approve(account, '447700900004', 'pool');
    // A token lives less than the days the clock moves: a fresh one each time.
    const later = async (days: number) => {
      t.clock.advance(days * DAY_MS);
      return senderOf(await t.login(account), to);
    };
    expect(await later(29)).toBe(first);
    // 58 days after the first send, 29 after the last: still the same.
    expect(await later(29)).toBe(first);
    const fresh = await later(31);
    expect(fresh).not.toBe(first);
    expect(grown).toContain(fresh);
  });

  it('prefers a sender approved for the recipient’s country by name', async () => {
    const account = await accountWithPool();
    await approve(account, '447700900099', 'pool', 'gb');
    const senders = await Promise.all(
      Array.from({ length: 10 }, (_, i) => senderOf(account, recipient(700 + i))),
    );
    expect(new Set(senders)).toEqual(new Set(['447700900099']));
    // A number of another country cannot get the sender approved for GB alone.
    const french = await Promise.all(
      Array.from({ length: 10 }, (_, i) => senderOf(account, `3361234${5600 + i}`)),
    );
    expect(french).not.toContain('447700900099');
  });
});

describe('the countries’ sender rules', () => {
  it('give a pool’s number where the networks replace names, and its name where they replace numbers', async () => {
    const account = await accountWithPool(['447700900001', 'ACME']);
    const brazil = await Promise.all(
      Array.from({ length: 6 }, (_, i) => senderOf(account, `55119876543${i}`)),
    );
    expect(new Set(brazil)).toEqual(new Set(['447700900001']));
    const india = await Promise.all(
      Array.from({ length: 6 }, (_, i) => senderOf(account, `91981234567${i}`)),
    );
    expect(new Set(india)).toEqual(new Set(['ACME']));
    // A name still reaches Brazil when it is the one named.
    expect((await send(account, { to: '5511987654329', from: 'ACME' })).status).toBe(202);
  });

  it('refuses an alphanumeric from to a US number, and takes the pool’s number instead of a default name', async () => {
    const account = await t.createAccount();
    await approve(account, 'ACME');
    const refused = await send(account, { to: '12025550123', from: 'ACME' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'from', issue: 'no_compliant_sender' }]);
    const graphql = await t.graphql(
      `mutation ($input: SendMessageInput!) { sendMessage(input: $input) {
        __typename ... on ValidationError { details { field issue } } } }`,
      { input: { to: '12025550123', message: 'Hi', from: 'ACME' } },
      account.token,
    );
    expect(graphql.body.data.sendMessage.details).toEqual([{ field: 'from', issue: 'no_compliant_sender' }]);
    // The same sender reaches GB.
    expect((await send(account, { to: '447700900555', from: 'ACME' })).status).toBe(202);

    await t.request('PATCH', '/v1/settings', { token: account.token, body: { default_sender: 'ACME' } });
    const noSender = await send(account, { to: '12025550124' });
    expect(noSender.status).toBe(422);
    expect(noSender.body.error.details).toEqual([{ field: 'to', issue: 'no_compliant_sender' }]);
    await approve(account, '12025550100', 'pool');
    expect(await senderOf(account, '12025550124')).toBe('12025550100');
    expect(await senderOf(account, '447700900556')).toBe('ACME');
    expect(
      await t.tern.deps.prisma.message.count({ where: { accountId: account.account, to: '12025550123' } }),
    ).toBe(0);
  });

  // Nine CLI processes, each a cold start.
  it('are listed and changed with the CLI, and applied at once by the process that changed them', {
    timeout: 120_000,
  }, async () => {
    const listed = await cli('countries', 'senders', '--list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.lines).toContainEqual({ country: 'US', alphanumeric: 'refused', numeric_replaced: false });
    expect(listed.lines).toContainEqual({ country: 'CN', alphanumeric: 'refused', numeric_replaced: false });
    expect(listed.lines).toContainEqual({ country: 'AE', alphanumeric: 'required', numeric_replaced: false });

    const account = await t.createAccount();
    await approve(account, 'NAMECO');
    await approve(account, '447700900777');
    const set = await cli('countries', 'senders', '--country', 'ie', '--alphanumeric', 'refused');
    expect(set.lines).toEqual([{ country: 'IE', alphanumeric: 'refused', numeric_replaced: false }]);
    expect((await cli('countries', 'senders', '--country', 'IE')).lines).toEqual(set.lines);
    await t.tern.services.countrySenderRules.refresh();
    const refused = await send(account, { to: '353851234567', from: 'NAMECO' });
    expect(refused.body.error?.details).toEqual([{ field: 'from', issue: 'no_compliant_sender' }]);
    expect((await send(account, { to: '353851234567', from: '447700900777' })).status).toBe(202);

    await cli('countries', 'senders', '--country', 'IE', '--alphanumeric', 'required');
    await t.tern.services.countrySenderRules.refresh();
    expect((await send(account, { to: '353851234568', from: '447700900777' })).status).toBe(422);
    expect((await send(account, { to: '353851234568', from: 'NAMECO' })).status).toBe(202);
    await cli('countries', 'senders', '--country', 'IE', '--alphanumeric', 'allowed');

    const bad = await cli('countries', 'senders', '--country', 'IE', '--alphanumeric', 'sometimes');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/allowed, replaced, refused or required/);
    const unknown = await cli('countries', 'senders', '--country', 'XX', '--alphanumeric', 'refused');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/country/);
  });

  it('fail a message accepted before its country refused its sender, before any carrier gets it', async () => {
    const account = await t.createAccount();
    await approve(account, 'LATECO');
    const sendAt = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const accepted = await send(account, { to: '4915123456789', from: 'LATECO', send_at: sendAt });
    expect(accepted.status).toBe(202);
    await t.tern.services.countrySenderRules.set({ country: 'DE', alphanumeric: 'refused' });
    try {
      t.clock.advance(61_000);
      await t.tern.services.scheduledReleases.releaseDue();
      const failed = await waitFor(async () => {
        const message = await t.request('GET', `/v1/messages/${accepted.body.message}`, {
          token: account.token,
        });
        return message.body.status === 'failed' ? message.body : null;
      }, 20_000);
      expect(failed.error).toMatchObject({ code: 'no_compliant_sender' });
    } finally {
      await t.tern.services.countrySenderRules.set({ country: 'DE', alphanumeric: 'allowed' });
    }
  });

  it('routes explain tells the sender an account’s message to a number would go from', {
    timeout: 60_000,
  }, async () => {
    const account = await accountWithPool();
    const first = await senderOf(account, '447700933333');
    const explained = await cli('routes', 'explain', '--to', '+447700933333', '--account', account.email);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.lines[0]).toMatchObject({
      sender: first,
      sender_reason: expect.stringMatching(/last got/),
    });
    // The UAE takes registered names only: a pool of numbers has none for it.
    const emirates = await cli('routes', 'explain', '--to', '+971501234567', '--account', account.email);
    expect(emirates.lines[0]).toMatchObject({
      sender: null,
      sender_reason: expect.stringMatching(/no_compliant_sender/),
    });
  });
});

describe('a campaign’s from', () => {
  async function campaignWith(account: TestAccount, fields: Record<string, unknown>) {
    const template = await t.request('POST', '/v1/templates', {
      token: account.token,
      body: { name: 'Hello', content: 'Hello {{name}}' },
    });
    return t.request('POST', '/v1/campaigns', {
      token: account.token,
      body: { name: 'Spring', template: template.body.template, ...fields },
    });
  }

  it('names an approved sender that every message goes from, and fails those its country refuses', async () => {
    const account = await t.createAccount();
    await approve(account, 'SPRING');
    const created = await campaignWith(account, { from: 'SPRING' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const campaign = created.body.campaign;
    expect((await t.request('GET', `/v1/campaigns/${campaign}`, { token: account.token })).body.from).toBe(
      'SPRING',
    );
    for (const phone of ['447700900881', '447700900882', '12025550881'])
      await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
        token: account.token,
        body: { phone, name: 'Ann' },
      });
    expect(
      (await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token })).status,
    ).toBe(200);
    const messages = await waitFor(async () => {
      const rows = await t.tern.deps.prisma.message.findMany({
        where: { campaignId: campaign },
        select: { to: true, sender: true, status: true, errorCode: true },
      });
      return rows.length === 3 ? rows : null;
    }, 20_000);
    const byNumber = new Map(messages.map((message) => [message.to, message]));
    expect(byNumber.get('447700900881')?.sender).toBe('SPRING');
    expect(byNumber.get('447700900882')?.sender).toBe('SPRING');
    expect(byNumber.get('12025550881')).toMatchObject({ status: 'failed', errorCode: 'no_compliant_sender' });
  });

  it('refuses a sender the operator did not approve, on both faces', async () => {
    const account = await t.createAccount();
    const refused = await campaignWith(account, { from: 'NOTMINE' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'from', issue: 'sender_not_allowed' }]);
    const graphql = await t.graphql(
      `mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) {
        __typename ... on ValidationError { details { field issue } } } }`,
      { input: { name: 'Spring', from: 'NOTMINE' } },
      account.token,
    );
    expect(graphql.body.data.createCampaign.details).toEqual([
      { field: 'from', issue: 'sender_not_allowed' },
    ]);
  });

  it('gives a campaign without from the pool’s sticky senders', async () => {
    const account = await accountWithPool();
    const earlier = await senderOf(account, '447700900991');
    const created = await campaignWith(account, {});
    const campaign = created.body.campaign;
    await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
      token: account.token,
      body: { phone: '447700900991', name: 'Ann' },
    });
    await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: account.token });
    const message = await waitFor(
      () =>
        t.tern.deps.prisma.message.findFirst({ where: { campaignId: campaign }, select: { sender: true } }),
      20_000,
    );
    expect(message.sender).toBe(earlier);
  });
});
