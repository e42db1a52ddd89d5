import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliOn } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Approved senders: the operator approves them with the CLI, a tenant sees them in its settings,
// and a send's `from` must name one (for the recipient's country), which the carrier then gets.

let smsc: LoopbackSmsc;
let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  smsc = await LoopbackSmsc.start();
  smsc.autoReceipt = 'tlv';
  t = await startTern({ env: { SMPP_RECONNECT_MS: '50', SMPP_RESPONSE_TIMEOUT_MS: '1000' } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  const catalog = t.tern.services.carrierCatalog;
  await catalog.addCarrier('solo', { url: smsc.url(), binds: 1 });
  const fallback = (await catalog.settings()).routes.find((route) => route.prefix === '*')!;
  await catalog.updateRoute(fallback.id, { carriers: 'solo' });
  await t.tern.services.carrierDirectory.refresh();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await smsc?.close();
});

const cli = (...args: string[]) => runCliOn(t, args);

const senders = (account: TestAccount, ...args: string[]) =>
  cli('accounts', 'senders', '--email', account.email, ...args);

const send = (account: TestAccount, body: Record<string, unknown>) =>
  t.request('POST', '/v1/messages/send', { token: account.token, body: { message: 'Hello', ...body } });

const sendThroughGraphql = (account: TestAccount, input: Record<string, unknown>) =>
  t.graphql(
    `mutation ($input: SendMessageInput!) { sendMessage(input: $input) {
      __typename ... on ValidationError { details { field issue } } ... on MessageAcceptance { id from } } }`,
    { input: { message: 'Hello', ...input } },
    account.token,
  );

const NOT_ALLOWED = [{ field: 'from', issue: 'sender_not_allowed' }];

/** The submit_sm the SMSC got for a number, once it has it. */
const submittedTo = (to: string) =>
  waitFor(async () => smsc.accepted.find((entry) => entry.submit.destination === to)?.submit ?? null, 20_000);

describe('the operator’s senders command', () => {
  it('adds, lists and removes senders, and the tenant sees them in its settings on both faces', async () => {
    const acme = await senders(alice, '--add', 'ACME');
    expect(acme.code, acme.stderr).toBe(0);
    expect(acme.lines).toEqual([
      { account: alice.account, sender: 'ACME', kind: 'alphanumeric', countries: null, pool: false },
    ]);
    const number = await senders(alice, '--add', '+447700900000', '--countries', 'gb,IE', '--pool');
    expect(number.lines).toEqual([
      {
        account: alice.account,
        sender: '447700900000',
        kind: 'numeric',
        countries: ['GB', 'IE'],
        pool: true,
      },
    ]);
    expect((await senders(alice, '--list')).lines.map((line) => line.sender)).toEqual([
      '447700900000',
      'ACME',
    ]);

    const settings = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(settings.body.senders).toEqual([
      { sender: '447700900000', kind: 'numeric', countries: ['GB', 'IE'], pool: true },
      { sender: 'ACME', kind: 'alphanumeric', countries: null, pool: false },
    ]);
    const graphql = await t.graphql(
      '{ settings { senders { sender kind countries pool } } }',
      {},
      alice.token,
    );
    expect(graphql.body.data.settings.senders).toHaveLength(2);
    // Another account sees none of them.
    expect((await t.request('GET', '/v1/settings', { token: bob.token })).body.senders).toEqual([]);

    const removed = await senders(alice, '--remove', '+447700900000');
    expect(removed.lines).toEqual([{ account: alice.account, sender: '447700900000', removed: true }]);
    expect((await senders(alice, '--list')).lines.map((line) => line.sender)).toEqual(['ACME']);
    const again = await senders(alice, '--remove', '447700900000');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not found/);
  });

  it('refuses senders that are not 1..11 letters, digits and spaces or E.164, saying what it takes', async () => {
    const tooLong = await senders(alice, '--add', 'ACMEACMEACM2');
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/invalid add \(too long: 1–11 characters\)/);
    const badNumber = await senders(alice, '--add', '+0447700900000');
    expect(badNumber.stderr).toMatch(/invalid add \(invalid e164/);
    const badCharacters = await senders(alice, '--add', 'AC-ME');
    expect(badCharacters.stderr).toMatch(/invalid add \(invalid format/);
    const badCountry = await senders(alice, '--add', 'SHOP', '--countries', 'XX');
    expect(badCountry.stderr).toMatch(/countries/);
    const twoActions = await senders(alice, '--add', 'SHOP', '--list');
    expect(twoActions.stderr).toMatch(/one of --add, --remove or --list/);
    expect((await t.request('GET', '/v1/settings', { token: alice.token })).body.senders).not.toContainEqual(
      expect.objectContaining({ sender: 'SHOP' }),
    );
  });

  it('holds an account to 100 senders, also when they are added at once', async () => {
    const account = await t.createAccount();
    const service = t.tern.services.accountSenders;
    for (let i = 0; i < 97; i++) await service.add(account.account, { sender: `S${i}` });
    const racing = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => service.add(account.account, { sender: `R${i}` })),
    );
    expect(racing.filter((result) => result.status === 'fulfilled')).toHaveLength(3);
    const over = await senders(account, '--add', 'ONEMORE');
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/100 approved senders/);
    // Changing one already approved is not adding one.
    expect((await senders(account, '--add', 'S1', '--countries', 'GB')).code).toBe(0);
    const settings = await t.request('GET', '/v1/settings', { token: account.token });
    expect(settings.body.senders).toHaveLength(100);
  });

  it('is not a tenant’s to change: settings refuse senders', async () => {
    const patched = await t.request('PATCH', '/v1/settings', {
      token: alice.token,
      body: { senders: [{ sender: 'MINE' }] },
    });
    expect(patched.status).toBe(422);
    expect(patched.body.error.details).toEqual([{ field: 'senders', issue: 'unknown_field' }]);
  });
});

describe('a send’s from', () => {
  it('refuses a sender the operator did not approve, on both faces, and stores nothing', async () => {
    const account = await t.createAccount();
    await t.tern.services.accountSenders.add(alice.account, { sender: 'ALICECO' });
    // Approved for another account is not approved for this one.
    const refused = await send(account, { to: '447700900101', from: 'ALICECO' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('validation_error');
    expect(refused.body.error.details).toEqual(NOT_ALLOWED);
    expect(refused.body.error.message).toMatch(/not a sender the operator approved/);
    const graphql = await sendThroughGraphql(account, { to: '447700900101', from: 'ALICECO' });
    expect(graphql.body.data.sendMessage).toEqual({ __typename: 'ValidationError', details: NOT_ALLOWED });
    expect(await t.tern.deps.prisma.message.count({ where: { accountId: account.account } })).toBe(0);
  });

  it('sends from an approved sender: the message shows it and the SMSC gets it as source_addr', async () => {
    await senders(alice, '--add', 'ACME');
    const accepted = await send(alice, { to: '447700900102', from: 'ACME' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body.from).toBe('ACME');
    expect((await submittedTo('447700900102')).source).toBe('ACME');
    const shown = await t.request('GET', `/v1/messages/${accepted.body.message}`, { token: alice.token });
    expect(shown.body.from).toBe('ACME');

    await senders(alice, '--add', '+447700900000', '--countries', 'GB');
    const graphql = await sendThroughGraphql(alice, { to: '447700900103', from: '+447700900000' });
    expect(graphql.body.data.sendMessage).toMatchObject({
      __typename: 'MessageAcceptance',
      from: '447700900000',
    });
    const submit = await submittedTo('447700900103');
    expect(submit.source).toBe('447700900000');
    const read = await t.graphql(
      'query ($id: ID!) { message(id: $id) { ... on Message { from } } }',
      { id: graphql.body.data.sendMessage.id },
      alice.token,
    );
    expect(read.body.data.message.from).toBe('447700900000');
  });

  it('refuses a sender approved for other countries than the number’s', async () => {
    await senders(alice, '--add', 'UKONLY', '--countries', 'GB');
    const us = await send(alice, { to: '12025550123', from: 'UKONLY' });
    expect(us.status).toBe(422);
    expect(us.body.error.details).toEqual(NOT_ALLOWED);
    expect(us.body.error.message).toMatch(/GB only/);
    expect((await send(alice, { to: '447700900104', from: 'UKONLY' })).status).toBe(202);
  });

  it('refuses a sender again once the operator removed it', async () => {
    await senders(alice, '--add', 'GONE');
    expect((await send(alice, { to: '447700900105', from: 'GONE' })).status).toBe(202);
    await senders(alice, '--remove', 'GONE');
    const refused = await send(alice, { to: '447700900106', from: 'GONE' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual(NOT_ALLOWED);
  });

  it('answers a retry with the same Idempotency-Key as before, even once its sender was removed', async () => {
    await senders(alice, '--add', 'RETRYCO');
    const body = { to: '447700900109', message: 'Hello', from: 'RETRYCO' };
    const headers = { 'Idempotency-Key': 'senders-retry-1' };
    const first = await t.request('POST', '/v1/messages/send', { token: alice.token, body, headers });
    expect(first.status).toBe(202);
    await senders(alice, '--remove', 'RETRYCO');
    const retry = await t.request('POST', '/v1/messages/send', { token: alice.token, body, headers });
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ message: first.body.message, from: 'RETRYCO' });
    const fresh = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body,
      headers: { 'Idempotency-Key': 'senders-retry-2' },
    });
    expect(fresh.body.error.details).toEqual(NOT_ALLOWED);
    // A lone '+' is no number: it names no sender.
    expect((await send(alice, { to: '447700900110', from: '+' })).body.error.details).toEqual(NOT_ALLOWED);
  });

  it('bounds from and keeps the account’s default sender when from is left out', async () => {
    const long = await send(alice, { to: '447700900107', from: 'x'.repeat(17) });
    expect(long.status).toBe(422);
    expect(long.body.error.details).toEqual([{ field: 'from', issue: 'too_long' }]);
    await t.request('PATCH', '/v1/settings', { token: alice.token, body: { default_sender: 'DEFAULTCO' } });
    const plain = await send(alice, { to: '447700900108' });
    expect(plain.status).toBe(202);
    // Chosen as it is accepted: the answer shows it.
    expect(plain.body.from).toBe('DEFAULTCO');
    expect((await submittedTo('447700900108')).source).toBe('DEFAULTCO');
    const shown = await waitFor(async () => {
      const message = await t.request('GET', `/v1/messages/${plain.body.message}`, { token: alice.token });
      return message.body.status === 'delivered' ? message.body : null;
    }, 20_000);
    expect(shown.from).toBe('DEFAULTCO');
  });
});

describe('the sender at the SMSC', () => {
  it('goes with the type of number and numbering plan of its kind: name, international number, short code', async () => {
    const account = await t.createAccount();
    await senders(account, '--add', 'ACME');
    await senders(account, '--add', '+447700900000');
    expect((await send(account, { to: '447700900201', from: 'ACME' })).status).toBe(202);
    expect((await send(account, { to: '447700900202', from: '+447700900000' })).status).toBe(202);
    // A short code is no E.164 number to approve: an account's default sender may be one.
    await t.request('PATCH', '/v1/settings', { token: account.token, body: { default_sender: '12345' } });
    const shortCode = await send(account, { to: '447700900203' });
    expect(shortCode.body.from).toBe('12345');
    expect(await submittedTo('447700900201')).toMatchObject({ source: 'ACME', sourceTon: 5, sourceNpi: 0 });
    expect(await submittedTo('447700900202')).toMatchObject({
      source: '447700900000',
      sourceTon: 1,
      sourceNpi: 1,
    });
    expect(await submittedTo('447700900203')).toMatchObject({ source: '12345', sourceTon: 3, sourceNpi: 0 });
  });
});
