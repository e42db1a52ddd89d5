import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Accounts that send through the same sender address: a mobile answers the address, not an
 * account. Ann goes out under the carrier's default sender, Ben names the same number as his own,
 * Cat has a sender of her own.
 */
const SHARED = '447700900900';
const OWN = 'CatCo';

let smsc: LoopbackSmsc;
let t: TestTern;
let receiver: WebhookReceiver;
let ann: TestAccount;
let ben: TestAccount;
let cat: TestAccount;

beforeAll(async () => {
  [smsc, receiver] = await Promise.all([LoopbackSmsc.start('tern', 'secret'), WebhookReceiver.start()]);
  smsc.autoReceipt = 'text';
  t = await startTern({
    env: {
      CARRIER: 'smpp',
      SMPP_URL: smsc.url(),
      SMPP_SOURCE_ADDR: `+${SHARED}`,
      SMPP_RECONNECT_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
    },
  });
  [ann, ben, cat] = await Promise.all([t.createAccount(), t.createAccount(), t.createAccount()]);
  expect((await api(ben, 'PATCH', '/v1/settings', { default_sender: SHARED })).status).toBe(200);
  expect((await api(cat, 'PATCH', '/v1/settings', { default_sender: OWN })).status).toBe(200);
  for (const [account, path] of [
    [ann, '/ann'],
    [ben, '/ben'],
    [cat, '/cat'],
  ] as const) {
    const registered = await api(account, 'POST', '/v1/webhooks', {
      url: `${receiver.url}${path}`,
      events: ['message.replied'],
    });
    expect(registered.status).toBe(201);
  }
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([smsc?.close(), receiver?.close()]);
});

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

/** Sends and waits until the SMSC has delivered it, so that the next send is later. */
async function sendDelivered(account: TestAccount, to: string, message = 'Hello') {
  const response = await api(account, 'POST', '/v1/messages/send', { to, message });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  const id = response.body.message as string;
  await waitFor(async () =>
    (await api(account, 'GET', `/v1/messages/${id}`)).body.status === 'delivered' ? true : null,
  );
  return id;
}

async function optedOutNumbers(account: TestAccount): Promise<string[]> {
  const response = await api(account, 'GET', '/v1/opt-outs');
  expect(response.status).toBe(200);
  return response.body.data.map((optOut: { phone: string }) => optOut.phone);
}

async function repliesTo(account: TestAccount, message: string): Promise<string[]> {
  const response = await t.graphql(
    `query ($id: ID!) { message(id: $id) { ... on Message { replies { text } } } }`,
    { id: message },
    account.token,
  );
  return response.body.data.message.replies.map((reply: { text: string }) => reply.text);
}

function repliedEvents(path: string) {
  return receiver
    .at(path)
    .map((callback) => JSON.parse(callback.body))
    .filter((event) => event.event === 'message.replied');
}

describe('replies to a sender that several accounts share (SMPP)', () => {
  it('sends each account from the address it was configured with', async () => {
    const mobile = '447700900700';
    await Promise.all([ann, ben, cat].map((account) => sendDelivered(account, mobile)));
    const sources = smsc.accepted
      .filter((entry) => entry.submit.destination === mobile)
      .map((entry) => entry.submit.source)
      .sort();
    expect(sources).toEqual([SHARED, SHARED, OWN].sort());
  });

  it('STOP opts the number out of every account that wrote from that address, START back in, others untouched', async () => {
    const mobile = '447700900701';
    const annMessage = await sendDelivered(ann, mobile);
    const benMessage = await sendDelivered(ben, mobile);
    const catMessage = await sendDelivered(cat, mobile);

    expect(await smsc.deliverMessage(mobile, 'STOP', { to: SHARED })).toBe(0);
    await waitFor(async () => ((await optedOutNumbers(ann)).includes(mobile) ? true : null));
    expect(await optedOutNumbers(ben)).toEqual([mobile]);
    expect(await optedOutNumbers(cat)).toEqual([]);
    for (const account of [ann, ben]) {
      const refused = await api(account, 'POST', '/v1/messages/send', {
        to: mobile,
        message: 'Still there?',
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({
        code: 'validation_error',
        details: [{ field: 'to', issue: 'opted_out' }],
      });
    }
    await sendDelivered(cat, mobile, 'A sender of my own');

    // Each account that lost the number is told, on its own message; the other is not.
    expect(await repliesTo(ann, annMessage)).toEqual(['STOP']);
    expect(await repliesTo(ben, benMessage)).toEqual(['STOP']);
    expect(await repliesTo(cat, catMessage)).toEqual([]);
    const annEvent = await waitFor(async () =>
      repliedEvents('/ann').find((event) => event.message === annMessage),
    );
    expect(annEvent).toMatchObject({ from: mobile, text: 'STOP' });
    const benEvent = await waitFor(async () =>
      repliedEvents('/ben').find((event) => event.message === benMessage),
    );
    expect(benEvent).toMatchObject({ from: mobile, text: 'STOP' });
    expect(repliedEvents('/cat').filter((event) => event.message === catMessage)).toEqual([]);

    // A STOP delivered again leaves one opt-out per account, as first recorded.
    const before = (await api(ann, 'GET', '/v1/opt-outs')).body.data;
    expect(await smsc.deliverMessage(mobile, 'stop', { to: `+${SHARED}` })).toBe(0);
    expect((await api(ann, 'GET', '/v1/opt-outs')).body.data).toEqual(before);
    expect(await optedOutNumbers(ben)).toEqual([mobile]);

    expect(await smsc.deliverMessage(mobile, 'START', { to: SHARED })).toBe(0);
    await waitFor(async () => ((await optedOutNumbers(ann)).length === 0 ? true : null));
    expect(await optedOutNumbers(ben)).toEqual([]);
    await sendDelivered(ann, mobile, 'Welcome back');
    await sendDelivered(ben, mobile, 'Welcome back');
    expect(await optedOutNumbers(cat)).toEqual([]);
  });

  it('a STOP to the other sender opts out only the account that wrote from it', async () => {
    const mobile = '447700900702';
    await Promise.all([ann, ben, cat].map((account) => sendDelivered(account, mobile)));
    expect(await smsc.deliverMessage(mobile, 'Unsubscribe', { to: OWN })).toBe(0);
    await waitFor(async () => ((await optedOutNumbers(cat)).includes(mobile) ? true : null));
    expect(await optedOutNumbers(ann)).not.toContain(mobile);
    expect(await optedOutNumbers(ben)).not.toContain(mobile);
    await sendDelivered(ann, mobile, 'Still welcome here');
  });

  it("a reply's text goes to the account that wrote last from the address replied to", async () => {
    const mobile = '447700900703';
    const annMessage = await sendDelivered(ann, mobile);
    // Cat writes last, but from her own sender.
    const catMessage = await sendDelivered(cat, mobile);
    expect(await smsc.deliverMessage(mobile, 'Yes please', { to: SHARED })).toBe(0);
    await waitFor(async () => ((await repliesTo(ann, annMessage)).length > 0 ? true : null));
    expect(await repliesTo(ann, annMessage)).toEqual(['Yes please']);
    expect(await repliesTo(cat, catMessage)).toEqual([]);

    const benMessage = await sendDelivered(ben, mobile);
    expect(await smsc.deliverMessage(mobile, 'And again', { to: `+${SHARED}` })).toBe(0);
    await waitFor(async () => ((await repliesTo(ben, benMessage)).length > 0 ? true : null));
    expect(await repliesTo(ben, benMessage)).toEqual(['And again']);
    expect(await repliesTo(ann, annMessage)).toEqual(['Yes please']);

    expect(await smsc.deliverMessage(mobile, 'Hi Cat', { to: OWN })).toBe(0);
    await waitFor(async () => ((await repliesTo(cat, catMessage)).length > 0 ? true : null));
    expect(await repliesTo(cat, catMessage)).toEqual(['Hi Cat']);
    expect(await repliesTo(ben, benMessage)).toEqual(['And again']);
  });
});

describe('replies to a shared sender with the simulator carrier', () => {
  it('a STOP answering one message opts the number out of every account that wrote from its sender, once', async () => {
    const simulated = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
    const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
      simulated.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });
    try {
      const accounts = await Promise.all([0, 1, 2].map(() => simulated.createAccount()));
      const [first, second, other] = accounts as [TestAccount, TestAccount, TestAccount];
      for (const [account, sender] of [
        [first, 'Shared'],
        [second, 'Shared'],
        [other, 'Solo'],
      ] as const)
        expect((await call(account, 'PATCH', '/v1/settings', { default_sender: sender })).status).toBe(200);
      const mobile = '5511955550003';
      const sent: string[] = [];
      for (const account of [first, second, other]) {
        const response = await call(account, 'POST', '/v1/messages/send', { to: mobile, message: 'Hi' });
        expect(response.status).toBe(202);
        const id = response.body.message as string;
        await waitFor(async () =>
          (await call(account, 'GET', `/v1/messages/${id}`)).body.status === 'delivered' ? true : null,
        );
        sent.push(id);
      }
      // What the simulator hands its sink for a reply to the first account's message, twice.
      for (let delivery = 0; delivery < 2; delivery += 1)
        await simulated.tern.services.carrierReports.recordInbound('simulator', {
          carrierMessageId: 'sim_stop_shared',
          from: mobile,
          to: null,
          text: 'STOP',
          at: new Date(),
          inReplyTo: sent[0],
        });
      for (const account of [first, second]) {
        const refused = await call(account, 'POST', '/v1/messages/send', { to: mobile, message: 'Again' });
        expect(refused.status).toBe(422);
        expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'opted_out' }]);
        expect((await call(account, 'GET', '/v1/opt-outs')).body.total).toBe(1);
      }
      expect((await call(other, 'GET', '/v1/opt-outs')).body.total).toBe(0);
      expect((await call(other, 'POST', '/v1/messages/send', { to: mobile, message: 'Again' })).status).toBe(
        202,
      );
      const replies = await simulated.tern.deps.prisma.inboundMessage.findMany({
        where: { carrierMessageId: 'sim_stop_shared' },
        select: { accountId: true, messageId: true },
      });
      expect(replies.sort((a, b) => (a.accountId < b.accountId ? -1 : 1))).toEqual(
        [
          { accountId: first.account, messageId: sent[0] },
          { accountId: second.account, messageId: sent[1] },
        ].sort((a, b) => (a.accountId < b.accountId ? -1 : 1)),
      );

      // Any other text goes to the account that wrote last from that sender; delivered again, it
      // is not stored again, even for an account that has written from the sender since.
      const reply = {
        carrierMessageId: 'sim_reply_shared',
        from: mobile,
        to: null,
        text: 'Who is this?',
        at: new Date(),
        inReplyTo: sent[0],
      };
      await simulated.tern.services.carrierReports.recordInbound('simulator', reply);
      const later = await simulated.createAccount();
      expect((await call(later, 'PATCH', '/v1/settings', { default_sender: 'Shared' })).status).toBe(200);
      const laterMessage = (await call(later, 'POST', '/v1/messages/send', { to: mobile, message: 'Hi' }))
        .body.message as string;
      await waitFor(async () =>
        (await call(later, 'GET', `/v1/messages/${laterMessage}`)).body.status === 'delivered' ? true : null,
      );
      await simulated.tern.services.carrierReports.recordInbound('simulator', reply);
      expect(
        await simulated.tern.deps.prisma.inboundMessage.findMany({
          where: { carrierMessageId: 'sim_reply_shared' },
          select: { accountId: true, messageId: true },
        }),
      ).toEqual([{ accountId: second.account, messageId: sent[1] }]);
    } finally {
      await simulated.stop();
    }
  });
});
