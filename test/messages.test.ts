import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SendMessageDocument, TernClient } from '../src/client/index.js';
import { newId } from '../src/lib/ids.js';
import { claimStatement } from '../src/modules/messages/message-delivery.js';
import { explainAnalyze, rowsThrownAway } from './support/query-plans.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '50' } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
});
afterAll(() => t.stop());

const send = (account: TestAccount, body: unknown, headers: Record<string, string> = {}) =>
  t.request('POST', '/v1/messages/send', { token: account.token, body, headers });

async function waitForStatus(account: TestAccount, id: string, statuses: string[]) {
  return waitFor(async () => {
    const response = await t.request('GET', `/v1/messages/${id}`, { token: account.token });
    return statuses.includes(response.body.status) ? response.body : null;
  });
}

async function createCampaign(accountId: string): Promise<string> {
  const id = newId('cmp');
  await t.tern.deps.prisma.campaign.create({ data: { id, accountId, name: 'Spring sale' } });
  return id;
}

async function carrierSubmissions(messageId: string): Promise<number> {
  return t.tern.deps.prisma.simulatedSubmission.count({ where: { reference: messageId } });
}

describe('POST /v1/messages/send', () => {
  it('answers 202 with the accepted message once it is stored', async () => {
    const response = await send(alice, { to: '5511999991234', message: 'Hello from Tern' });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      message: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      status: 'queued',
      to: '5511999991234',
      request: response.headers.get('x-request-id'),
    });
    const stored = await t.tern.deps.prisma.message.findUnique({ where: { id: response.body.message } });
    expect(stored).toMatchObject({ accountId: alice.account, to: '5511999991234', text: 'Hello from Tern' });
  });

  it('links the message to a campaign of the account and returns it', async () => {
    const campaign = await createCampaign(alice.account);
    const response = await send(alice, { to: '5511999991235', message: 'Campaign hello', campaign });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'queued', campaign });
  });

  it.each([
    ['a campaign that does not exist', () => Promise.resolve('cmp_doesnotexist')],
    ['a campaign of another account', () => createCampaign(bob.account)],
  ])('refuses %s with 422 campaign not_found', async (_case, campaignOf) => {
    const response = await send(alice, { to: '5511999991236', message: 'Hi', campaign: await campaignOf() });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'campaign', issue: 'not_found' }],
    });
  });

  it('behaves the same at the alias POST /v1/messages', async () => {
    const response = await t.request('POST', '/v1/messages', {
      token: alice.token,
      body: { to: '5511999991237', message: 'Alias' },
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'queued', to: '5511999991237' });
    const invalid = await t.request('POST', '/v1/messages', {
      token: alice.token,
      body: { to: '+5511', message: '' },
    });
    expect(invalid.status).toBe(422);
  });

  it.each([
    ['++5511999991234', 'invalid_e164'],
    ['55119999912a4', 'invalid_e164'],
    ['5511 99999', 'invalid_e164'],
    ['123456', 'invalid_e164'],
    ['1234567890123456', 'invalid_e164'],
    ['05511999991234', 'invalid_e164'],
    ['', 'invalid_e164'],
  ])('refuses to = %j with 422 %s and stores nothing', async (to, issue) => {
    const before = await t.tern.deps.prisma.message.count();
    const response = await send(alice, { to, message: 'Hi' });
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({
      code: 'validation_error',
      message: expect.any(String),
      details: [{ field: 'to', issue }],
    });
    expect(await t.tern.deps.prisma.message.count()).toBe(before);
  });

  it('accepts 7 and 15 digits when the numbering plan has such numbers (Niue, Germany)', async () => {
    expect((await send(alice, { to: '6834002', message: 'short number' })).status).toBe(202);
    expect((await send(alice, { to: '491511234567890', message: 'long number' })).status).toBe(202);
  });

  it.each([
    ['', 'too_short'],
    ['x'.repeat(1601), 'too_long'],
    ['😀'.repeat(1601), 'too_long'],
  ])('refuses a message of %# with 422 %s', async (message, issue) => {
    const response = await send(alice, { to: '5511999991238', message });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'message', issue }]);
  });

  it('accepts a message of exactly 1600 characters, emoji counting one each', async () => {
    expect((await send(alice, { to: '5511999991239', message: 'x'.repeat(1600) })).status).toBe(202);
    expect((await send(alice, { to: '5511999991239', message: '😀'.repeat(1600) })).status).toBe(202);
  });

  it('lists every bad field at once, and missing ones as required', async () => {
    const response = await send(alice, { to: '+1', message: 42 });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'message', issue: 'invalid_value' }]);
    const missing = await send(alice, {});
    expect(missing.body.error.details).toEqual([
      { field: 'to', issue: 'required' },
      { field: 'message', issue: 'required' },
    ]);
    const both = await send(alice, { to: '+1', message: '' });
    expect(both.body.error.details).toEqual([
      { field: 'to', issue: 'invalid_e164' },
      { field: 'message', issue: 'too_short' },
    ]);
  });
});

describe('Idempotency-Key', () => {
  it('answers a replay with the first acceptance and sends nothing new', async () => {
    const body = { to: '5511988880001', message: 'Only once' };
    const first = await send(alice, body, { 'Idempotency-Key': 'order-1001' });
    const second = await send(alice, body, { 'Idempotency-Key': 'order-1001' });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.message).toBe(first.body.message);
    expect(second.body.status).toBe('queued');
    expect(second.body.request).not.toBe(first.body.request);
    expect(await t.tern.deps.prisma.message.count({ where: { to: body.to } })).toBe(1);

    await waitForStatus(alice, first.body.message, ['failed']);
    const third = await send(alice, body, { 'Idempotency-Key': 'order-1001' });
    expect(third.body).toMatchObject({ message: first.body.message, status: 'queued' });
    expect(await carrierSubmissions(first.body.message)).toBe(1);
  });

  it('refuses the same key with another body with 422 reused', async () => {
    await send(alice, { to: '5511988880002', message: 'First body' }, { 'Idempotency-Key': 'order-1002' });
    const response = await send(
      alice,
      { to: '5511988880002', message: 'Second body' },
      { 'Idempotency-Key': 'order-1002' },
    );
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'Idempotency-Key', issue: 'reused' }]);
  });

  it('keeps the keys of different accounts apart', async () => {
    const body = { to: '5511988880003', message: 'Same key, two accounts' };
    const fromAlice = await send(alice, body, { 'Idempotency-Key': 'shared-key' });
    const fromBob = await send(bob, body, { 'Idempotency-Key': 'shared-key' });
    expect(fromBob.status).toBe(202);
    expect(fromBob.body.message).not.toBe(fromAlice.body.message);
  });

  it('gives one message to concurrent requests with the same key', async () => {
    const body = { to: '5511988880004', message: 'Raced' };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => send(alice, body, { 'Idempotency-Key': 'raced-key' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect(new Set(responses.map((r) => r.body.message)).size).toBe(1);
    expect(await t.tern.deps.prisma.message.count({ where: { to: body.to } })).toBe(1);
  });

  it('forgets a key after 24 hours', async () => {
    const body = { to: '5511988880005', message: 'Daily' };
    const first = await send(alice, body, { 'Idempotency-Key': 'daily-key' });
    t.clock.advance(24 * 60 * 60 * 1000 + 1000);
    // Tokens age with the clock too: log in again, a day later.
    [alice, bob] = await Promise.all([t.login(alice), t.login(bob)]);
    const later = await send(alice, body, { 'Idempotency-Key': 'daily-key' });
    expect(later.status).toBe(202);
    expect(later.body.message).not.toBe(first.body.message);
  });

  it('refuses a key over 255 characters', async () => {
    const response = await send(
      alice,
      { to: '5511988880006', message: 'x' },
      { 'Idempotency-Key': 'k'.repeat(256) },
    );
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'Idempotency-Key', issue: 'too_long' }]);
  });

  it('works through GraphQL with the idempotencyKey argument', async () => {
    const client = new TernClient({ url: `${t.url}/graphql`, token: alice.token });
    const input = { to: '5511988880007', message: 'GraphQL once' };
    const first = await client.request(SendMessageDocument, { input, idempotencyKey: 'gql-key' });
    const second = await client.request(SendMessageDocument, { input, idempotencyKey: 'gql-key' });
    expect(first.send_message).toMatchObject({
      message: expect.stringMatching(/^msg_/),
      status: 'queued',
      to: input.to,
    });
    expect(second.send_message).toEqual({ ...first.send_message, replayed: true });
  });
});

describe('text PostgreSQL cannot store', () => {
  it('is refused when it comes as a literal in the GraphQL document, as it is in a variable', async () => {
    const before = await t.tern.deps.prisma.message.count();
    // A NUL escape is valid GraphQL (a lone surrogate escape is not: the parser refuses it).
    const response = await t.graphql(
      'mutation { sendMessage(input: { to: "5511988880099", message: "a\\u0000b" }) { __typename } }',
      {},
      alice.token,
    );
    expect(response.body.data ?? null, JSON.stringify(response.body)).toBeNull();
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'input.message', issue: 'invalid_value' }],
    });
    expect(await t.tern.deps.prisma.message.count()).toBe(before);
  });
});

describe('the simulator, end to end', () => {
  it('delivers an ordinary number: queued → sent → delivered, with events', async () => {
    const { body } = await send(alice, { to: '5511977771234', message: 'Deliver me' });
    const delivered = await waitForStatus(alice, body.message, ['delivered']);
    expect(delivered).toMatchObject({
      message: body.message,
      to: '5511977771234',
      text: 'Deliver me',
      status: 'delivered',
      campaign: null,
      segments: 1,
      encoding: 'GSM-7',
      failed_at: null,
      error: null,
    });
    expect(Date.parse(delivered.sent_at)).toBeGreaterThanOrEqual(Date.parse(delivered.created_at));
    expect(Date.parse(delivered.delivered_at)).toBeGreaterThanOrEqual(Date.parse(delivered.sent_at));
    const events = await t.tern.deps.prisma.event.findMany({
      where: { messageId: body.message },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.map((e) => e.type)).toEqual(['message.sent', 'message.delivered']);
    expect(events[1]!.payload).toEqual({
      event: 'message.delivered',
      message: body.message,
      to: '5511977771234',
      // No sender of the account's, and the simulator has none of its own.
      from: null,
      status: 'delivered',
      delivered_at: delivered.delivered_at,
      campaign: null,
    });
    expect(events.every((e) => e.id.startsWith('evt_') && e.accountId === alice.account)).toBe(true);
    expect(await carrierSubmissions(body.message)).toBe(1);
  });

  it('fails a number ending 0001 with error unreachable', async () => {
    const { body } = await send(alice, { to: '5511977770001', message: 'Nobody home' });
    const failed = await waitForStatus(alice, body.message, ['failed']);
    expect(failed).toMatchObject({
      status: 'failed',
      delivered_at: null,
      error: { code: 'unreachable', message: expect.any(String) },
    });
    expect(failed.failed_at).toEqual(expect.any(String));
    const event = await t.tern.deps.prisma.event.findFirstOrThrow({
      where: { messageId: body.message, type: 'message.failed' },
    });
    expect(event.payload).toMatchObject({
      status: 'failed',
      failed_at: failed.failed_at,
      error: { code: 'unreachable' },
    });
  });

  it('delivers a number ending 0002 and stores its reply, linked to the latest message to it', async () => {
    const older = await send(alice, { to: '5511977770002', message: 'First' });
    await waitForStatus(alice, older.body.message, ['delivered']);
    const { body } = await send(alice, { to: '5511977770002', message: 'Second' });
    await waitForStatus(alice, body.message, ['delivered']);
    const replied = await waitFor(async () => {
      const response = await t.graphql(
        `{ message(id: "${body.message}") { ... on Message { status replies { id from text messageId } } } }`,
        {},
        alice.token,
      );
      return response.body.data.message.replies.length > 0 ? response.body.data.message : null;
    });
    expect(replied.replies).toEqual([
      {
        id: expect.stringMatching(/^inb_/),
        from: '5511977770002',
        text: 'Thanks, got it',
        messageId: body.message,
      },
    ]);
    const event = await t.tern.deps.prisma.event.findFirstOrThrow({
      where: { messageId: body.message, type: 'message.replied' },
    });
    expect(event.payload).toMatchObject({
      event: 'message.replied',
      message: body.message,
      inbound: replied.replies[0].id,
      from: '5511977770002',
      text: 'Thanks, got it',
    });
  });
});

describe('statuses only move forward', () => {
  it('ignores late and repeated reports', async () => {
    const { body } = await send(alice, { to: '5511966661234', message: 'Forward only' });
    const delivered = await waitForStatus(alice, body.message, ['delivered']);
    const { carrierReports, messageDelivery } = t.tern.services;
    const stored = await t.tern.deps.prisma.message.findUniqueOrThrow({ where: { id: body.message } });
    expect(stored.carrier).toBe('default');
    await carrierReports.applyDeliveryReport(stored.carrier!, {
      carrierMessageId: stored.carrierMessageId!,
      status: 'failed',
      at: new Date(),
      error: { code: 'x', message: 'late' },
    });
    await carrierReports.applyDeliveryReport(stored.carrier!, {
      carrierMessageId: stored.carrierMessageId!,
      status: 'delivered',
      at: new Date(),
    });
    await messageDelivery.recordSubmitted(
      { id: stored.id, to: stored.to, campaignId: stored.campaignId },
      stored.carrier!,
      stored.carrierMessageId!,
    );
    const after = await t.request('GET', `/v1/messages/${body.message}`, { token: alice.token });
    expect(after.body).toMatchObject({
      status: 'delivered',
      delivered_at: delivered.delivered_at,
      failed_at: null,
      error: null,
    });
    expect(await t.tern.deps.prisma.event.count({ where: { messageId: body.message } })).toBe(2);
  });

  it('never hands a claimed message to the carrier again', async () => {
    const { body } = await send(alice, { to: '5511966661235', message: 'Claimed once' });
    await waitForStatus(alice, body.message, ['delivered']);
    expect(await t.tern.services.messageDelivery.claimForSending(body.message, 0)).toBeNull();
    await t.tern.deps.queues.messageSend.add(
      'send',
      { messageIds: [body.message] },
      { jobId: `${body.message}-again` },
    );
    // The job has run (finished jobs are removed), and handed nothing over again.
    await waitFor(async () =>
      (await t.tern.deps.queues.messageSend.getJob(`${body.message}-again`)) ? null : true,
    );
    expect(await carrierSubmissions(body.message)).toBe(1);
  });
});

describe('encoding and segments', () => {
  it.each([
    ['a'.repeat(160), 'GSM-7', 1],
    ['a'.repeat(161), 'GSM-7', 2],
    ['a'.repeat(306), 'GSM-7', 2],
    ['a'.repeat(307), 'GSM-7', 3],
    ['€'.repeat(80), 'GSM-7', 1],
    ['€'.repeat(81), 'GSM-7', 2],
    [`${'a'.repeat(158)}{`, 'GSM-7', 1],
    [`${'a'.repeat(159)}{`, 'GSM-7', 2],
    ['😀'.repeat(35), 'UCS-2', 1],
    ['😀'.repeat(36), 'UCS-2', 2],
    [`${'a'.repeat(69)}ç`, 'UCS-2', 1],
    [`${'a'.repeat(70)}ç`, 'UCS-2', 2],
    [`${'a'.repeat(65)}😀`, 'UCS-2', 1],
    [`${'a'.repeat(66)}😀😀`, 'UCS-2', 1],
    [`${'a'.repeat(67)}😀😀`, 'UCS-2', 2],
  ])('%#: stores %s/%d for the text and previews the same', async (text, encoding, segments) => {
    const preview = await t.request('POST', '/v1/messages/preview', {
      token: alice.token,
      body: { message: text },
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ encoding, segments });
    const { body } = await send(alice, { to: '5511955551234', message: text });
    const stored = await t.request('GET', `/v1/messages/${body.message}`, { token: alice.token });
    expect(stored.body).toMatchObject({ encoding, segments });
  });

  it('names the characters that force UCS-2 and counts characters as people do', async () => {
    const response = await t.request('POST', '/v1/messages/preview', {
      token: alice.token,
      body: { message: 'Olá ção 😀 ção' },
    });
    expect(response.body).toEqual({
      encoding: 'UCS-2',
      segments: 1,
      characters: 13,
      ucs2_characters: ['á', 'ç', 'ã', '😀'],
      request: expect.any(String),
    });
    const gql = await t.graphql(
      '{ previewMessage(input: { message: "€ {x}" }) { ... on TextPreview { encoding segments characters ucs2Characters } } }',
      {},
      alice.token,
    );
    expect(gql.body.data.previewMessage).toEqual({
      encoding: 'GSM-7',
      segments: 1,
      characters: 5,
      ucs2Characters: [],
    });
  });

  it('sends nothing on preview and validates the text', async () => {
    const before = await t.tern.deps.prisma.message.count();
    const empty = await t.request('POST', '/v1/messages/preview', {
      token: alice.token,
      body: { message: '' },
    });
    expect(empty.status).toBe(422);
    expect(await t.tern.deps.prisma.message.count()).toBe(before);
  });
});

describe('reading messages', () => {
  it("answers 404 for an unknown id and for another account's message", async () => {
    const { body } = await send(alice, { to: '5511944441234', message: 'Mine' });
    for (const [token, id] of [
      [alice.token, 'msg_unknown'],
      [bob.token, body.message],
    ]) {
      const response = await t.request('GET', `/v1/messages/${id}`, { token });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const gql = await t.graphql(
      `{ message(id: "${body.message}") { __typename ... on Error { code } } }`,
      {},
      bob.token,
    );
    expect(gql.body.data.message).toEqual({ __typename: 'NotFoundError', code: 'not_found' });
  });

  it("lists the account's messages newest first, filtered and paginated", async () => {
    const carol = await t.createAccount();
    const campaign = await createCampaign(carol.account);
    const sent: string[] = [];
    for (const [to, linked] of [
      ['5511933330001', false],
      ['5511933331111', true],
      ['5511933332222', true],
      ['5511933331111', false],
    ] as const) {
      const response = await send(carol, { to, message: 'List me', ...(linked ? { campaign } : {}) });
      sent.push(response.body.message);
    }
    await waitForStatus(carol, sent[0]!, ['failed']);

    const all = await t.request('GET', '/v1/messages', { token: carol.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ page: 1, per_page: 20, total: 4 });
    expect(all.body.data.map((m: { message: string }) => m.message)).toEqual([...sent].reverse());
    expect(Object.keys(all.body.data[0])).toEqual([
      'message',
      'to',
      'text',
      'status',
      'campaign',
      'segments',
      'encoding',
      'from',
      'carrier',
      'created_at',
      'sent_at',
      'delivered_at',
      'failed_at',
      'send_at',
      'waits_until',
      'expires_at',
      'cancelled_at',
      'error',
    ]);

    const byCampaign = await t.request('GET', `/v1/messages?campaign=${campaign}`, { token: carol.token });
    expect(byCampaign.body.data.map((m: { message: string }) => m.message)).toEqual([sent[2], sent[1]]);
    const byTo = await t.request('GET', '/v1/messages?to=5511933331111', { token: carol.token });
    expect(byTo.body.total).toBe(2);
    const failed = await t.request('GET', '/v1/messages?status=failed', { token: carol.token });
    expect(failed.body.data.map((m: { message: string }) => m.message)).toEqual([sent[0]]);

    const page2 = await t.request('GET', '/v1/messages?page=2&per_page=3', { token: carol.token });
    expect(page2.body).toMatchObject({ page: 2, per_page: 3, total: 4 });
    expect(page2.body.data.map((m: { message: string }) => m.message)).toEqual([sent[0]]);

    const gql = await t.graphql(
      '{ messages(perPage: 2) { ... on MessagePage { total nodes { id } } } }',
      {},
      carol.token,
    );
    expect(gql.body.data.messages).toEqual({ total: 4, nodes: [{ id: sent[3] }, { id: sent[2] }] });
  });

  it.each([
    ['per_page=101', 'per_page', 'invalid_value'],
    ['per_page=0', 'per_page', 'invalid_value'],
    ['page=0', 'page', 'invalid_value'],
    ['page=abc', 'page', 'invalid_value'],
    ['status=read', 'status', 'invalid_value'],
    ['to=%2B5511', 'to', 'invalid_e164'],
    ['page=1&page=2', 'page', 'invalid_value'],
  ])('refuses ?%s with 422 on %s', async (query, field, issue) => {
    const response = await t.request('GET', `/v1/messages?${query}`, { token: alice.token });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field, issue }]);
  });
});

describe("the carrier's pace", () => {
  it('never hands the carrier more than CARRIER_MAX_PER_SECOND messages in a second', async () => {
    const paced = await startTern({ env: { SIMULATOR_DELAY_MS: '0', CARRIER_MAX_PER_SECOND: '5' } });
    try {
      const account = await paced.createAccount();
      const ids: string[] = [];
      for (let i = 0; i < 15; i += 1) {
        const response = await paced.request('POST', '/v1/messages/send', {
          token: account.token,
          body: { to: `55119222200${10 + i}`, message: 'Paced' },
        });
        ids.push(response.body.message);
      }
      const sentAt = await waitFor(async () => {
        const rows = await paced.tern.deps.prisma.message.findMany({
          where: { id: { in: ids }, sentAt: { not: null } },
          select: { sentAt: true },
        });
        return rows.length === ids.length
          ? rows.map((row) => row.sentAt!.getTime()).sort((a, b) => a - b)
          : null;
      }, 20_000);
      // 15 messages at 5 a second take three windows of a second, the first opened by the
      // first message: two seconds from first to last, less the jitter of recording sent_at.
      expect(sentAt.at(-1)! - sentAt[0]!).toBeGreaterThanOrEqual(1_500);
    } finally {
      await paced.stop();
    }
  });
});

describe('claims under misleading statistics', () => {
  it('claims a batch by probing each message, when the statistics say no message is queued', async () => {
    const carol = await t.createAccount();
    t.database.leaveOutOfLedger(carol.account, 'its messages are inserted by hand, to mislead the planner');
    const prisma = t.tern.deps.prisma;
    // A table of delivered messages, analysed: to the planner, almost nothing is queued.
    await prisma.$executeRaw`
      INSERT INTO messages (id, account_id, "to", text, encoding, segments, status)
      SELECT 'msg_done' || g, ${carol.account}, '5511' || g, 'hi', 'GSM-7', 1, 'delivered' FROM generate_series(1, 5000) g`;
    await prisma.$executeRaw`ANALYZE messages`;
    // Then a campaign's worth is queued (dated ahead, so that no worker of the test's Tern takes them).
    await prisma.$executeRaw`
      INSERT INTO messages (id, account_id, "to", text, encoding, segments, created_at)
      SELECT 'msg_wait' || g, ${carol.account}, '5511' || g, 'hi', 'GSM-7', 1, now() + interval '1 day'
      FROM generate_series(1, 3000) g`;
    const requests = Array.from({ length: 100 }, (_, i) => ({
      id: `msg_wait${i * 30 + 1}`,
      leaseMs: 60_000,
    }));
    const statement = claimStatement(requests, { now: new Date(), carrierSender: null, skipLocked: true });
    const plan = await explainAnalyze(prisma, statement);
    // Scanning the queued messages per claim throws away 100 × 3,000 rows.
    expect(rowsThrownAway(plan)).toBeLessThanOrEqual(100);
    expect(plan['Actual Rows']).toBe(100);
    await prisma.message.deleteMany({ where: { accountId: carol.account } });
  });
});
