import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { pendingContactsQuery } from '../src/modules/campaigns/pending-contacts.js';
import { explainAnalyze, planNodes, rowsThrownAway } from './support/query-plans.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;
let template: string;

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  template = await createTemplate(alice, 'Hi {{name}}, your code is {{document}}.');
});
afterAll(() => t.stop());

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

async function createTemplate(account: TestAccount, content: string): Promise<string> {
  const response = await api(account, 'POST', '/v1/templates', {
    name: `Template ${Math.random()}`,
    content,
  });
  expect(response.status).toBe(201);
  return response.body.template;
}

async function createCampaign(account: TestAccount, fields: Record<string, unknown> = {}): Promise<string> {
  const response = await api(account, 'POST', '/v1/campaigns', { name: 'Spring sale', template, ...fields });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.campaign;
}

async function addContacts(account: TestAccount, campaign: string, count: number, phonePrefix = '55119') {
  await t.tern.deps.prisma.contact.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      id: newId('cnt'),
      accountId: account.account,
      campaignId: campaign,
      phone: `${phonePrefix}${String(i + 10).padStart(8, '0')}`,
      name: `Contact ${i}`,
      createdAt: new Date(Date.now() + i),
    })),
  });
}

async function setStatus(
  campaign: string,
  status: 'draft' | 'scheduled' | 'running' | 'paused' | 'finished' | 'cancelled',
) {
  await t.tern.deps.prisma.campaign.update({ where: { id: campaign }, data: { status } });
}

function waitForCampaign(account: TestAccount, campaign: string, status: string, timeoutMs = 20_000) {
  return waitFor(async () => {
    const response = await api(account, 'GET', `/v1/campaigns/${campaign}`);
    return response.body.status === status ? response.body : null;
  }, timeoutMs);
}

describe('POST /v1/campaigns', () => {
  it('answers 201 with the creation fields, status scheduled', async () => {
    const response = await api(alice, 'POST', '/v1/campaigns', {
      name: 'Black Friday',
      description: 'Internal note',
      webhook: 'https://hooks.example.com/tern',
      delay: 2.5,
      template,
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      campaign: expect.stringMatching(/^cmp_/),
      name: 'Black Friday',
      status: 'scheduled',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      request: response.headers.get('x-request-id'),
    });
    const stored = await api(alice, 'GET', `/v1/campaigns/${response.body.campaign}`);
    expect(stored.body).toEqual({
      campaign: response.body.campaign,
      name: 'Black Friday',
      description: 'Internal note',
      webhook: 'https://hooks.example.com/tern',
      delay: 2.5,
      template,
      batch_size: 100,
      send_at: null,
      send_window: null,
      validity: null,
      from: null,
      status: 'scheduled',
      paused_reason: null,
      created_at: response.body.created_at,
      updated_at: expect.any(String),
      stats: {
        contacts: 0,
        queued: 0,
        sent: 0,
        delivered: 0,
        failed: 0,
        replied: 0,
        opted_out: 0,
        waiting: 0,
      },
      request: stored.headers.get('x-request-id'),
    });
  });

  it.each([
    [{}, 'name', 'required'],
    [{ name: '' }, 'name', 'too_short'],
    [{ name: 'x'.repeat(121) }, 'name', 'too_long'],
    [{ name: 'ok', description: 'x'.repeat(2001) }, 'description', 'too_long'],
    [{ name: 'ok', webhook: 'http://hooks.example.com' }, 'webhook', 'invalid_format'],
    [{ name: 'ok', webhook: 'not a url' }, 'webhook', 'invalid_format'],
    [{ name: 'ok', delay: -1 }, 'delay', 'invalid_value'],
    [{ name: 'ok', delay: 86_401 }, 'delay', 'invalid_value'],
    [{ name: 'ok', delay: '5' }, 'delay', 'invalid_value'],
    [{ name: 'ok', template: 'tpl_missing' }, 'template', 'not_found'],
    [{ name: 'ok', batch_size: 0 }, 'batch_size', 'invalid_value'],
    [{ name: 'ok', batch_size: 10_001 }, 'batch_size', 'invalid_value'],
    [{ name: 'ok', send_at: 'tomorrow' }, 'send_at', 'invalid_format'],
    [{ name: 'ok', status: 'running' }, 'status', 'unknown_field'],
  ])('refuses %j with 422 on %s (%s)', async (body, field, issue) => {
    const response = await api(alice, 'POST', '/v1/campaigns', body);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toContainEqual({ field, issue });
  });

  it("refuses another account's template as not_found", async () => {
    const bobsTemplate = await createTemplate(bob, 'Bob says hi');
    const response = await api(alice, 'POST', '/v1/campaigns', { name: 'Borrowed', template: bobsTemplate });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'template', issue: 'not_found' }]);
  });
});

describe('reading, changing and deleting campaigns', () => {
  it("lists the account's campaigns newest first with stats, paginated", async () => {
    const carol = await t.createAccount();
    const carolsTemplate = await createTemplate(carol, 'Hello');
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      const response = await api(carol, 'POST', '/v1/campaigns', { name, template: carolsTemplate });
      ids.push(response.body.campaign);
    }
    await addContacts(carol, ids[1]!, 3);
    const list = await api(carol, 'GET', '/v1/campaigns?per_page=2');
    expect(list.body).toMatchObject({ page: 1, per_page: 2, total: 3 });
    expect(list.body.data.map((c: { campaign: string }) => c.campaign)).toEqual([ids[2], ids[1]]);
    expect(list.body.data[1].stats.contacts).toBe(3);
    expect((await api(carol, 'GET', '/v1/campaigns?status=running')).body.total).toBe(0);
  });

  it('changes any subset of the fields with PATCH and answers the stored form', async () => {
    const campaign = await createCampaign(alice);
    const other = await createTemplate(alice, 'Other {{name}}');
    const response = await api(alice, 'PATCH', `/v1/campaigns/${campaign}`, {
      description: 'New text',
      delay: 10,
      template: other,
      batch_size: 500,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      campaign,
      name: 'Spring sale',
      description: 'New text',
      delay: 10,
      template: other,
      batch_size: 500,
    });
    const invalid = await api(alice, 'PATCH', `/v1/campaigns/${campaign}`, { delay: -5, name: '' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details).toEqual([
      { field: 'name', issue: 'too_short' },
      { field: 'delay', issue: 'invalid_value' },
    ]);
  });

  it('deletes a campaign: 200, then 404 everywhere', async () => {
    const campaign = await createCampaign(alice);
    const response = await api(alice, 'DELETE', `/v1/campaigns/${campaign}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ campaign, deleted: true, request: response.headers.get('x-request-id') });
    for (const [method, path] of [
      ['GET', `/v1/campaigns/${campaign}`],
      ['PATCH', `/v1/campaigns/${campaign}`],
      ['DELETE', `/v1/campaigns/${campaign}`],
      ['POST', `/v1/campaigns/${campaign}/start`],
      ['GET', `/v1/campaigns/${campaign}/contacts`],
    ] as const) {
      const after = await api(alice, method, path, method === 'PATCH' ? { delay: 1 } : undefined);
      expect(after.status, `${method} ${path}`).toBe(404);
    }
  });

  it("answers 404 for another account's campaign on every route, and changes nothing", async () => {
    const campaign = await createCampaign(alice);
    for (const [method, path, body] of [
      ['GET', `/v1/campaigns/${campaign}`, undefined],
      ['PATCH', `/v1/campaigns/${campaign}`, { name: 'Mine now' }],
      ['DELETE', `/v1/campaigns/${campaign}`, undefined],
      ['POST', `/v1/campaigns/${campaign}/start`, undefined],
      ['POST', `/v1/campaigns/${campaign}/cancel`, undefined],
      ['POST', `/v1/campaigns/${campaign}/contacts`, { phone: '5511900000001' }],
      ['GET', `/v1/campaigns/${campaign}/contacts`, undefined],
    ] as const) {
      const response = await api(bob, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const mine = await api(alice, 'GET', `/v1/campaigns/${campaign}`);
    expect(mine.body).toMatchObject({ name: 'Spring sale', status: 'scheduled', stats: { contacts: 0 } });
    expect((await api(bob, 'GET', '/v1/campaigns')).body.data).toEqual([]);
  });
});

describe('the transition table', () => {
  const allowed: Record<string, Record<string, string>> = {
    draft: { schedule: 'scheduled', cancel: 'cancelled' },
    scheduled: { start: 'running', unschedule: 'draft', cancel: 'cancelled' },
    running: { pause: 'paused', cancel: 'cancelled' },
    paused: { resume: 'running', cancel: 'cancelled' },
    finished: {},
    cancelled: {},
  };
  const actions = ['start', 'pause', 'resume', 'cancel', 'schedule', 'unschedule'];
  const cases = Object.entries(allowed).flatMap(([from, moves]) =>
    actions.map((action) => [from, action, moves[action] ?? null] as const),
  );

  it.each(cases)('%s + %s → %s', async (from, action, to) => {
    const campaign = await createCampaign(alice);
    // Contacts keep a started campaign running long enough to read its status.
    await addContacts(alice, campaign, 1);
    await t.tern.deps.prisma.campaign.update({
      where: { id: campaign },
      data: { status: from as never, delay: 3600, batchSize: 1 },
    });
    const response = await api(alice, 'POST', `/v1/campaigns/${campaign}/${action}`);
    if (to) {
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ campaign, status: to });
    } else {
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('invalid_state');
      const unchanged = await api(alice, 'GET', `/v1/campaigns/${campaign}`);
      expect(unchanged.body.status).toBe(from);
    }
  });

  it('refuses to start a campaign without a template', async () => {
    const campaign = await createCampaign(alice, { template: null });
    const response = await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'template', issue: 'required' }]);
  });

  it('writes campaign events with the status after the event and the stats', async () => {
    const campaign = await createCampaign(alice, { delay: 3600, batch_size: 1 });
    await addContacts(alice, campaign, 2);
    await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    await waitFor(() => t.tern.deps.prisma.message.findFirst({ where: { campaignId: campaign } }));
    await api(alice, 'POST', `/v1/campaigns/${campaign}/pause`);
    await api(alice, 'POST', `/v1/campaigns/${campaign}/cancel`);
    const events = await t.tern.deps.prisma.event.findMany({
      where: { campaignId: campaign, type: { startsWith: 'campaign.' } },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.map((e) => e.type)).toEqual(['campaign.started', 'campaign.paused', 'campaign.cancelled']);
    expect(events[0]!.payload).toEqual({
      event: 'campaign.started',
      campaign,
      status: 'running',
      stats: {
        contacts: 2,
        queued: 0,
        sent: 0,
        delivered: 0,
        failed: 0,
        replied: 0,
        opted_out: 0,
        waiting: 0,
      },
    });
    expect(events[2]!.payload).toMatchObject({
      event: 'campaign.cancelled',
      status: 'cancelled',
      stats: { contacts: 2 },
    });
  });
});

describe('dispatch', () => {
  it('reads a batch with one index probe per contact, even when the statistics say a campaign has no messages', async () => {
    const carol = await t.createAccount();
    t.database.leaveOutOfLedger(carol.account, 'its messages are inserted by hand, to mislead the planner');
    const prisma = t.tern.deps.prisma;
    // A table of single sends, analysed: to the planner, campaign_id is as good as always null.
    await prisma.$executeRaw`
      INSERT INTO messages (id, account_id, "to", text, encoding, segments)
      SELECT 'msg_single' || g, ${carol.account}, '5511' || g, 'hi', 'GSM-7', 1 FROM generate_series(1, 5000) g`;
    await prisma.$executeRaw`ANALYZE messages`;
    const campaign = await createCampaign(carol, { template: await createTemplate(carol, 'Hi {{name}}') });
    await addContacts(carol, campaign, 3_000);
    // Half the campaign sent already, after the statistics were taken.
    await prisma.$executeRaw`
      INSERT INTO messages (id, account_id, campaign_id, contact_id, "to", text, encoding, segments)
      SELECT 'msg_sent_' || c.id, c.account_id, c.campaign_id, c.id, c.phone, 'hi', 'GSM-7', 1
      FROM contacts c WHERE c.campaign_id = ${campaign} ORDER BY c.created_at LIMIT 1500`;

    const query = pendingContactsQuery(
      { id: campaign, account_id: carol.account, dispatched_through_at: null, dispatched_through_id: null },
      1_000,
    );
    const plan = await explainAnalyze(prisma, query);
    // A quadratic plan compares every contact with every message of the campaign (millions here),
    // in a join or in a scan of the campaign's messages per contact.
    expect(rowsThrownAway(plan)).toBeLessThanOrEqual(3_000);
    const messageReads = planNodes(plan).filter((node) => node['Relation Name'] === 'messages');
    expect(messageReads.length).toBeGreaterThan(0);
    for (const read of messageReads) {
      expect(read['Index Cond'] ?? '', JSON.stringify(read)).toContain('contact_id');
      expect(read['Actual Rows']).toBeLessThanOrEqual(1);
    }
    expect(await prisma.$queryRaw<unknown[]>(query)).toHaveLength(1_000);
  });

  it('sends 1,000 contacts in 10 batches of 100 at least 0.2 s apart, one message each', async () => {
    const campaign = await createCampaign(alice, { batch_size: 100, delay: 0.2 });
    await addContacts(alice, campaign, 1000);
    expect((await api(alice, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
    const finished = await waitForCampaign(alice, campaign, 'finished', 30_000);
    expect(finished.stats.contacts).toBe(1000);

    const messages = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign },
      select: { contactId: true, createdAt: true },
    });
    expect(messages).toHaveLength(1000);
    expect(new Set(messages.map((m) => m.contactId)).size).toBe(1000);
    const batches = new Map<number, number>();
    for (const message of messages)
      batches.set(message.createdAt.getTime(), (batches.get(message.createdAt.getTime()) ?? 0) + 1);
    const times = [...batches.keys()].sort((a, b) => a - b);
    expect([...batches.values()]).toEqual(Array(10).fill(100));
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(200);

    const done = await waitFor(async () => {
      const response = await api(alice, 'GET', `/v1/campaigns/${campaign}`);
      return response.body.stats.delivered === 1000 ? response.body : null;
    }, 30_000);
    expect(done.stats).toEqual({
      contacts: 1000,
      queued: 0,
      sent: 0,
      delivered: 1000,
      failed: 0,
      replied: 0,
      opted_out: 0,
      waiting: 0,
    });
  });

  it('stops new batches on pause and finishes the rest on resume', async () => {
    const campaign = await createCampaign(alice, { batch_size: 50, delay: 0.3 });
    await addContacts(alice, campaign, 300);
    await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    await waitFor(async () =>
      (await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } })) >= 100 ? true : null,
    );
    expect((await api(alice, 'POST', `/v1/campaigns/${campaign}/pause`)).body.status).toBe('paused');
    const atPause = await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } });
    // The batch that was due next runs, finds the campaign paused and schedules none after it.
    await waitFor(async () => {
      const pending = await t.tern.deps.queues.campaignDispatch.getJobs(['active', 'waiting', 'delayed']);
      return pending.some((job) => job.data.campaignId === campaign) ? null : true;
    });
    // And a batch run now, as a duplicate or recovered job would, sends nothing either.
    expect(await t.tern.services.campaignDispatch.dispatchBatch(campaign)).toEqual({
      messageIds: [],
      next: null,
    });
    expect(await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } })).toBe(atPause);
    expect(atPause).toBeLessThan(300);

    expect((await api(alice, 'POST', `/v1/campaigns/${campaign}/resume`)).body.status).toBe('running');
    await waitForCampaign(alice, campaign, 'finished');
    const messages = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign },
      select: { contactId: true },
    });
    expect(messages).toHaveLength(300);
    expect(new Set(messages.map((m) => m.contactId)).size).toBe(300);
  });

  it('picks up contacts added while running', async () => {
    const campaign = await createCampaign(alice, { batch_size: 10, delay: 0.5 });
    await addContacts(alice, campaign, 20, '55118');
    await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    const added = await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, {
      phone: '5511700000001',
      name: 'Late',
    });
    expect(added.status).toBe(201);
    await waitForCampaign(alice, campaign, 'finished');
    expect(await t.tern.deps.prisma.message.count({ where: { campaignId: campaign } })).toBe(21);
  });

  it('never gives a contact a second message, even with dispatchers racing', async () => {
    const campaign = await createCampaign(alice, { batch_size: 7, delay: 0 });
    await addContacts(alice, campaign, 40, '55117');
    await setStatus(campaign, 'running');
    await Promise.all(
      Array.from({ length: 6 }, () => t.tern.services.campaignDispatch.dispatchBatch(campaign)),
    );
    await waitForCampaign(alice, campaign, 'finished');
    const messages = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign },
      select: { contactId: true },
    });
    expect(messages).toHaveLength(40);
    expect(new Set(messages.map((m) => m.contactId)).size).toBe(40);
    await expect(
      t.tern.deps.prisma.message.create({
        data: {
          id: newId('msg'),
          accountId: alice.account,
          campaignId: campaign,
          contactId: (await t.tern.deps.prisma.contact.findFirstOrThrow({ where: { campaignId: campaign } }))
            .id,
          to: '5511700000002',
          text: 'x',
          encoding: 'GSM_7',
          segments: 1,
        },
      }),
    ).rejects.toThrow(/Unique constraint/);
  });

  it("renders each contact's fields, leaves unknown placeholders, and keeps UCS-2 content", async () => {
    const content =
      'Olá {{name}}! Code {{document}}, mail {{email}}, tags {{tags}}, phone {{phone}}, {{coupon}} 😀';
    const campaign = await createCampaign(alice, {
      template: await createTemplate(alice, content),
      delay: 0,
    });
    for (const contact of [
      { phone: '5511600000001', name: 'Ana', email: 'ana@example.com', document: '123', tags: ['vip', 'sp'] },
      { phone: '5511600000002' },
    ]) {
      expect((await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, contact)).status).toBe(201);
    }
    await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    await waitForCampaign(alice, campaign, 'finished');
    const messages = await api(alice, 'GET', `/v1/messages?campaign=${campaign}`);
    const byPhone = Object.fromEntries(messages.body.data.map((m: { to: string }) => [m.to, m]));
    expect(byPhone['5511600000001']).toMatchObject({
      text: 'Olá Ana! Code 123, mail ana@example.com, tags vip, sp, phone 5511600000001, {{coupon}} 😀',
      encoding: 'UCS-2',
      campaign,
    });
    expect(byPhone['5511600000002'].text).toBe(
      'Olá ! Code , mail , tags , phone 5511600000002, {{coupon}} 😀',
    );
  });

  it('starts a scheduled campaign at send_at, and not after unschedule', async () => {
    // Far enough ahead for the set-up below to be done before it on a busy machine.
    const soon = new Date(Date.now() + 4_000).toISOString();
    const other = await createCampaign(alice, { send_at: soon, delay: 0 });
    expect((await api(alice, 'POST', `/v1/campaigns/${other}/unschedule`)).body.status).toBe('draft');
    await addContacts(alice, other, 2, '55115');
    const campaign = await createCampaign(alice, { send_at: soon, delay: 0 });
    await addContacts(alice, campaign, 2, '55116');

    const finished = await waitForCampaign(alice, campaign, 'finished');
    expect(finished.send_at).toBe(soon);
    // The unscheduled one's start, due at the same moment, is gone or has run and found it a draft;
    // run again now, as a duplicate or recovered job would, it starts nothing either.
    await waitFor(async () => {
      const pending = await t.tern.deps.queues.campaignDispatch.getJobs(['active', 'waiting', 'delayed']);
      return pending.some((job) => job.data.campaignId === other) ? null : true;
    });
    await t.tern.services.campaignLifecycle.startScheduled(other, new Date(soon));
    expect((await api(alice, 'GET', `/v1/campaigns/${other}`)).body.status).toBe('draft');
    expect(await t.tern.deps.prisma.message.count({ where: { campaignId: other } })).toBe(0);
  });
});

describe('contacts', () => {
  it("adds one with its phone normalised and answers the contact's fields", async () => {
    const campaign = await createCampaign(alice);
    const response = await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, {
      phone: '+55 (11) 98888-7777',
      name: 'Maria',
      email: 'maria@example.com',
      document: '123.456.789-00',
      tags: ['vip', 'sp'],
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      contact: expect.stringMatching(/^cnt_/),
      campaign,
      phone: '5511988887777',
      name: 'Maria',
      request: response.headers.get('x-request-id'),
    });
    const read = await api(alice, 'GET', `/v1/campaigns/${campaign}/contacts/${response.body.contact}`);
    expect(read.body).toMatchObject({
      phone: '5511988887777',
      email: 'maria@example.com',
      document: '123.456.789-00',
      tags: ['vip', 'sp'],
    });

    const duplicate = await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, {
      phone: '5511988887777',
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('conflict');
  });

  it.each([
    [{}, 'phone', 'required'],
    [{ phone: '123' }, 'phone', 'invalid_e164'],
    [{ phone: '5511900000000', email: 'not-an-email' }, 'email', 'invalid_format'],
    [{ phone: '5511900000000', name: 'x'.repeat(201) }, 'name', 'too_long'],
    [{ phone: '5511900000000', document: 'x'.repeat(65) }, 'document', 'too_long'],
    [{ phone: '5511900000000', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags', 'too_long'],
    [{ phone: '5511900000000', tags: ['x'.repeat(51)] }, 'tags.0', 'too_long'],
    [{ phone: '5511900000000', tags: [''] }, 'tags.0', 'too_short'],
  ])('refuses %j with 422 on %s', async (body, field, issue) => {
    const campaign = await createCampaign(alice);
    const response = await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, body);
    expect(response.status).toBe(422);
    expect(response.body.error.details).toContainEqual({ field, issue });
  });

  it('lists them in order, filtered by tag and paginated', async () => {
    const campaign = await createCampaign(alice);
    for (const [phone, tags] of [
      ['5511910000001', ['vip']],
      ['5511910000002', []],
      ['5511910000003', ['vip', 'late']],
    ] as const) {
      await api(alice, 'POST', `/v1/campaigns/${campaign}/contacts`, { phone, tags });
    }
    const all = await api(alice, 'GET', `/v1/campaigns/${campaign}/contacts?per_page=2`);
    expect(all.body).toMatchObject({ page: 1, per_page: 2, total: 3 });
    expect(all.body.data.map((c: { phone: string }) => c.phone)).toEqual(['5511910000001', '5511910000002']);
    const vip = await api(alice, 'GET', `/v1/campaigns/${campaign}/contacts?tag=vip`);
    expect(vip.body.data.map((c: { phone: string }) => c.phone)).toEqual(['5511910000001', '5511910000003']);
    expect(Object.keys(vip.body.data[0])).toEqual([
      'contact',
      'campaign',
      'phone',
      'name',
      'email',
      'document',
      'tags',
      'timezone',
      'created_at',
    ]);
  });
});

describe('campaigns through GraphQL', () => {
  it('resolves template, contacts, messages and stats of a list in one request', async () => {
    const campaign = await createCampaign(alice, { delay: 0 });
    await addContacts(alice, campaign, 3, '55114');
    await api(alice, 'POST', `/v1/campaigns/${campaign}/start`);
    await waitForCampaign(alice, campaign, 'finished');
    const response = await t.graphql(
      `query ($id: ID!) {
        campaign(id: $id) {
          ... on Campaign {
            status
            template { id content }
            contacts(perPage: 2) { phone messages { status } }
            messages(perPage: 10) { to text }
            stats { contacts }
          }
        }
        campaigns(perPage: 100) { ... on CampaignPage { nodes { id stats { contacts } } } }
      }`,
      { id: campaign },
      alice.token,
    );
    expect(response.body.errors).toBeUndefined();
    const data = response.body.data;
    expect(data.campaign).toMatchObject({
      status: 'finished',
      template: { id: template },
      stats: { contacts: 3 },
    });
    expect(data.campaign.contacts).toHaveLength(2);
    expect(data.campaign.contacts[0].messages).toHaveLength(1);
    expect(data.campaign.messages).toHaveLength(3);
    expect(data.campaign.messages[0].text).toMatch(/^Hi Contact \d, your code is \.$/);
    expect(data.campaigns.nodes.find((c: { id: string }) => c.id === campaign).stats.contacts).toBe(3);
  });

  it('answers the same stored form through GraphQL and /v1', async () => {
    const campaign = await createCampaign(alice);
    const rest = await api(alice, 'GET', `/v1/campaigns/${campaign}`);
    const graphql = await t.graphql(
      `query ($id: ID!) { campaign(id: $id) { ... on Campaign { id name description webhook delay templateId batchSize sendAt sendWindow { days start end } validity from status pausedReason createdAt updatedAt stats { contacts queued sent delivered failed replied opted_out: optedOut waiting } } } }`,
      { id: campaign },
      alice.token,
    );
    const g = graphql.body.data.campaign;
    expect({
      campaign: g.id,
      name: g.name,
      description: g.description,
      webhook: g.webhook,
      delay: g.delay,
      template: g.templateId,
      batch_size: g.batchSize,
      send_at: g.sendAt,
      send_window: g.sendWindow,
      validity: g.validity,
      from: g.from,
      status: g.status,
      paused_reason: g.pausedReason,
      created_at: g.createdAt,
      updated_at: g.updatedAt,
      stats: g.stats,
    }).toEqual((({ request: _request, ...body }) => body)(rest.body));
  });
});
