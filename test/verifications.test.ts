import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CheckVerificationDocument,
  StartVerificationDocument,
  TernClient,
  TernClientError,
  VerificationDocument,
} from '../src/client/index.js';
import { LoopbackSmsc, type RawSubmit } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// One-time codes: the code reaches the phone (the SMSC) and nowhere else; it is approved once,
// checked five times at most, expires at the clock; resends and starts per number are limited.

let smsc: LoopbackSmsc;
let receiver: WebhookReceiver;
let t: TestTern;
/** Every line Tern logged, at every level. */
const logged: string[] = [];
/** Every body Tern answered in this file. */
const answered: string[] = [];

beforeAll(async () => {
  [smsc, receiver] = await Promise.all([LoopbackSmsc.start('tern', 'secret'), WebhookReceiver.start()]);
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  t = await startTern({
    env: {
      CARRIER: 'smpp',
      SMPP_URL: smsc.url(),
      SMPP_RECONNECT_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_RETRY_BASE_MS: '100',
    },
    logger: pino({ level: 'trace' }, sink),
  });
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([smsc?.close(), receiver?.close()]);
});

async function api(account: TestAccount, method: string, path: string, body?: unknown) {
  const response = await t.request(method, path, {
    token: account.token,
    ...(body === undefined ? {} : { body }),
  });
  answered.push(JSON.stringify(response.body));
  return response;
}

let numbers = 0;
/** A number of its own for each use: the limits are per number. */
const newNumber = () => `5511987${String(++numbers).padStart(6, '0')}`;

/** What the phone shows: UCS-2 (data_coding 8) is big-endian UTF-16; digits read the same in GSM-7. */
function textOf(submit: RawSubmit): string {
  if (submit.dataCoding !== 8) return submit.shortMessage.toString('latin1');
  return Buffer.from(submit.shortMessage).swap16().toString('utf16le');
}

/** The code the phone got: the digits of the last submit_sm the SMSC accepted for `to`, once there. */
function codeAt(to: string, nth = 1): Promise<string> {
  return waitFor(async () => {
    const texts = smsc.accepted
      .filter((accepted) => accepted.submit.destination === to)
      .map((accepted) => textOf(accepted.submit));
    return texts.length >= nth ? /[0-9]{4,10}/.exec(texts[nth - 1]!)![0] : null;
  });
}

async function start(account: TestAccount, body: Record<string, unknown>) {
  const response = await api(account, 'POST', '/v1/verifications', body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { verification: string; to: string; status: string; expires_at: string };
}

const check = (account: TestAccount, id: string, code: string) =>
  api(account, 'POST', `/v1/verifications/${id}/check`, { code });

/** A code of the same length that is not `code`. */
const wrong = (code: string) => code.replace(/^./, (digit) => String((Number(digit) + 1) % 10));

describe('a verification', () => {
  it('sends the code to the phone only: answers, listing, logs and webhooks show it masked or not at all', async () => {
    const account = await t.createAccount();
    const hooked = await api(account, 'POST', '/v1/webhooks', {
      url: `${receiver.url}/approved`,
      events: ['verification.approved', 'message.delivered', 'message.failed'],
    });
    expect(hooked.status).toBe(201);
    const to = newNumber();
    const started = await start(account, { to: `+${to}` });
    expect(started).toEqual({
      verification: expect.stringMatching(/^vrf_/),
      to,
      status: 'pending',
      expires_at: new Date(Date.parse(started.expires_at)).toISOString(),
      request: expect.any(String),
    });
    const code = await codeAt(to);
    expect(code).toHaveLength(6);
    expect(textOf(smsc.accepted.find((a) => a.submit.destination === to)!.submit)).toBe(
      `O seu código de verificação é ${code}`,
    );

    const read = await api(account, 'GET', `/v1/verifications/${started.verification}`);
    expect(read.body).toMatchObject({ status: 'pending', attempts: 0, sends: 1, error: null });
    const listed = await api(account, 'GET', `/v1/messages?to=${to}`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].text).toBe('O seu código de verificação é ******');
    const message = await api(account, 'GET', `/v1/messages/${read.body.message}`);
    expect(message.body.text).toBe('O seu código de verificação é ******');
    const stored = await t.tern.deps.prisma.verification.findUniqueOrThrow({
      where: { id: started.verification },
    });
    expect(stored.codeHmac).not.toContain(code);

    expect((await check(account, started.verification, wrong(code))).body).toMatchObject({
      status: 'denied',
    });
    expect((await check(account, started.verification, code)).body).toEqual({
      verification: started.verification,
      status: 'approved',
      request: expect.any(String),
    });
    const event = await waitFor(async () =>
      receiver
        .at('/approved')
        .find((callback) => JSON.parse(callback.body).event === 'verification.approved'),
    );
    expect(JSON.parse(event.body)).toMatchObject({
      verification: started.verification,
      to,
      status: 'approved',
    });
    const approved = await api(account, 'GET', `/v1/verifications/${started.verification}`);
    expect(approved.body).toMatchObject({ status: 'approved', attempts: 2 });
    // After hand-over the sealed text is gone: the code survives nowhere in the database.
    const row = await t.tern.deps.prisma.message.findUniqueOrThrow({ where: { id: read.body.message } });
    expect(row.sealedText).toBeNull();
    for (const text of [...answered, ...logged, ...receiver.received.map((callback) => callback.body)])
      expect(text).not.toContain(code);
  });

  it('approves exactly one of 10 parallel checks of the right code', async () => {
    const account = await t.createAccount();
    const to = newNumber();
    const { verification } = await start(account, { to });
    const code = await codeAt(to);
    const answers = await Promise.all(Array.from({ length: 10 }, () => check(account, verification, code)));
    const statuses = answers.map((answer) => answer.body.status);
    expect(statuses.filter((status) => status === 'approved')).toHaveLength(1);
    expect(statuses.filter((status) => status === 'denied')).toHaveLength(9);
  });

  it('refuses the right code as max_attempts_reached on the 6th check after 5 wrong ones', async () => {
    const account = await t.createAccount();
    const to = newNumber();
    const { verification } = await start(account, { to, code_length: 8 });
    const code = await codeAt(to);
    expect(code).toHaveLength(8);
    for (let i = 0; i < 5; i++)
      expect((await check(account, verification, wrong(code))).body.status).toBe('denied');
    expect((await check(account, verification, code)).body.status).toBe('max_attempts_reached');
    const read = await api(account, 'GET', `/v1/verifications/${verification}`);
    expect(read.body).toMatchObject({ status: 'max_attempts_reached', attempts: 5 });
  });

  it('answers expired once its ttl has passed at the clock, and the sweep tells webhooks of it', async () => {
    const account = await t.createAccount();
    await api(account, 'POST', '/v1/webhooks', {
      url: `${receiver.url}/expired`,
      events: ['verification.expired'],
    });
    const [first, second] = [newNumber(), newNumber()];
    const checked = await start(account, { to: first, ttl: 60 });
    const swept = await start(account, { to: second, ttl: 120 });
    const code = await codeAt(first);
    t.clock.advance(60_000);
    expect((await check(account, checked.verification, code)).body.status).toBe('expired');
    expect((await api(account, 'GET', `/v1/verifications/${swept.verification}`)).body.status).toBe(
      'pending',
    );
    t.clock.advance(60_000);
    expect((await api(account, 'GET', `/v1/verifications/${swept.verification}`)).body.status).toBe(
      'expired',
    );
    expect(await t.tern.services.verificationChecks.expireDue()).toBeGreaterThanOrEqual(1);
    const events = await waitFor(async () => {
      const bodies = receiver
        .at('/expired')
        .map((callback) => JSON.parse(callback.body))
        .filter((body) => body.event === 'verification.expired');
      return bodies.length >= 2 ? bodies : null;
    });
    expect(events.map((event) => event.verification).sort()).toEqual(
      [checked.verification, swept.verification].sort(),
    );
    expect(events.find((event) => event.verification === swept.verification)).toMatchObject({
      event: 'verification.expired',
      to: second,
      status: 'expired',
      expired_at: swept.expires_at,
    });
    // Each expiry is told once, however it was noticed.
    expect(await t.tern.services.verificationChecks.expireDue()).toBe(0);
  });

  it('fills the account’s template, and refuses one without {{code}}', async () => {
    const account = await t.createAccount();
    const good = await api(account, 'POST', '/v1/templates', {
      name: 'otp',
      content: 'ACME: {{ code }} is your code',
    });
    const bad = await api(account, 'POST', '/v1/templates', { name: 'hello', content: 'Hello {{name}}' });
    const to = newNumber();
    await start(account, { to, template: good.body.template, code_length: 4 });
    const code = await codeAt(to);
    expect(code).toHaveLength(4);
    const listed = await api(account, 'GET', `/v1/messages?to=${to}`);
    expect(listed.body.data[0].text).toBe('ACME: **** is your code');
    const refused = await api(account, 'POST', '/v1/verifications', {
      to: newNumber(),
      template: bad.body.template,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'template', issue: 'invalid_value' }]);
  });

  it('takes a default text in the language of the number’s country', async () => {
    const account = await t.createAccount();
    const to = '33612345678';
    await start(account, { to });
    const code = await codeAt(to);
    const listed = await api(account, 'GET', `/v1/messages?to=${to}`);
    expect(listed.body.data[0].text).toBe('Votre code de vérification est ******');
    expect(code).toMatch(/^[0-9]{6}$/);
  });

  it('refuses a code_length, ttl or code out of bounds', async () => {
    const account = await t.createAccount();
    for (const body of [
      { to: newNumber(), code_length: 3 },
      { to: newNumber(), code_length: 11 },
      { to: newNumber(), ttl: 59 },
      { to: newNumber(), ttl: 3601 },
      { to: '123' },
    ]) {
      const refused = await api(account, 'POST', '/v1/verifications', body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
    }
    const { verification } = await start(account, { to: newNumber() });
    for (const code of ['123', '12345678901', '12a456', ''])
      expect((await check(account, verification, code)).status).toBe(422);
    // A malformed code is not an attempt.
    expect((await api(account, 'GET', `/v1/verifications/${verification}`)).body.attempts).toBe(0);
  });

  it('says so when the message of its code failed', async () => {
    const account = await t.createAccount();
    const to = newNumber();
    smsc.behaviour = (_n, submit) => (submit.destination === to ? { status: 0x45 } : 'ok');
    try {
      const { verification } = await start(account, { to });
      const read = await waitFor(async () => {
        const response = await api(account, 'GET', `/v1/verifications/${verification}`);
        return response.body.status === 'failed' ? response.body : null;
      });
      expect(read.error.code).toEqual(expect.any(String));
    } finally {
      smsc.behaviour = () => 'ok';
    }
  });

  it('answers each of checks of different verifications arriving together for itself', async () => {
    const [owner, other] = [await t.createAccount(), await t.createAccount()];
    const tos = Array.from({ length: 5 }, newNumber);
    const ids: string[] = [];
    for (const to of tos) ids.push((await start(owner, { to })).verification);
    const codes = await Promise.all(tos.map((to) => codeAt(to)));
    const [right, wrongThrice, spent, approved, twice] = ids as [string, string, string, string, string];
    for (let i = 0; i < 5; i++) await check(owner, spent, wrong(codes[2]!));
    expect((await check(owner, approved, codes[3]!)).body.status).toBe('approved');
    const together = (account: TestAccount, id: string, code: string) =>
      t.tern.services.verificationChecks.check(account.account, id, { code }).then(
        (answer) => answer.status,
        (error: { code: string }) => error.code,
      );
    // The first two take the two statements in flight; the others wait and share the next one,
    // the second check of one verification in a statement after it.
    const answers = await Promise.all([
      together(owner, wrongThrice, wrong(codes[1]!)),
      together(owner, wrongThrice, wrong(codes[1]!)),
      together(owner, right, codes[0]!),
      together(other, twice, codes[4]!),
      together(owner, spent, codes[2]!),
      together(owner, approved, codes[3]!),
      together(owner, twice, codes[4]!),
      together(owner, twice, codes[4]!),
      together(owner, wrongThrice, wrong(codes[1]!)),
    ]);
    expect(answers).toEqual([
      'denied',
      'denied',
      'approved',
      'not_found',
      'max_attempts_reached',
      'denied',
      'approved',
      'denied',
      'denied',
    ]);
    const rows = await t.tern.deps.prisma.verification.findMany({ where: { id: { in: ids } } });
    const attempts = Object.fromEntries(rows.map((row) => [row.id, [row.status, row.attempts]]));
    expect(attempts).toEqual({
      [right]: ['approved', 1],
      [wrongThrice]: ['pending', 3],
      [spent]: ['max_attempts_reached', 5],
      [approved]: ['approved', 1],
      [twice]: ['approved', 1],
    });
    const events = await t.tern.deps.prisma.event.findMany({
      where: { accountId: owner.account, type: 'verification.approved' },
    });
    expect(
      events
        .map(({ payload }) => payload as { verification: string; to: string })
        .sort((a, b) => a.verification.localeCompare(b.verification)),
    ).toEqual(
      [right, approved, twice]
        .map((id) => ({ verification: id, to: tos[ids.indexOf(id)] }))
        .sort((a, b) => a.verification.localeCompare(b.verification))
        .map((expected) => expect.objectContaining({ ...expected, status: 'approved' })),
    );
  });

  it('is 404 to another account, for a read and for a check', async () => {
    const [owner, other] = [await t.createAccount(), await t.createAccount()];
    const to = newNumber();
    const { verification } = await start(owner, { to });
    const code = await codeAt(to);
    const read = await api(other, 'GET', `/v1/verifications/${verification}`);
    expect(read.status).toBe(404);
    const checked = await check(other, verification, code);
    expect(checked.status).toBe(404);
    const missing = await api(other, 'GET', '/v1/verifications/vrf_missing');
    expect(missing.body.error).toEqual({ ...read.body.error, message: missing.body.error.message });
    expect((await api(owner, 'GET', `/v1/verifications/${verification}`)).body.attempts).toBe(0);
  });
});

describe('resends and starts per number', () => {
  it('makes a resend wait 30 s, then twice as long each time, five codes at most (429 with Retry-After)', async () => {
    const account = await t.createAccount();
    const to = newNumber();
    const { verification } = await start(account, { to, ttl: 3600 });
    const first = await codeAt(to);
    const early = await api(account, 'POST', '/v1/verifications', { to });
    expect(early.status).toBe(429);
    expect(early.body.error.code).toBe('rate_limited');
    expect(Number(early.headers.get('retry-after'))).toBe(30);
    let waitMs = 30_000;
    for (let send = 2; send <= 5; send++) {
      t.clock.advance(waitMs - 1_000);
      const tooEarly = await api(account, 'POST', '/v1/verifications', { to });
      expect(tooEarly.status).toBe(429);
      expect(Number(tooEarly.headers.get('retry-after'))).toBe(1);
      t.clock.advance(1_000);
      const resent = await start(account, { to, ttl: 3600 });
      expect(resent.verification).toBe(verification);
      waitMs *= 2;
    }
    t.clock.advance(waitMs);
    const sixth = await api(account, 'POST', '/v1/verifications', { to });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    const last = await codeAt(to, 5);
    // Only the last code sent holds.
    if (last !== first) expect((await check(account, verification, first)).body.status).toBe('denied');
    expect((await check(account, verification, last)).body.status).toBe('approved');
    expect((await api(account, 'GET', `/v1/verifications/${verification}`)).body.sends).toBe(5);
  });

  it('starts a number 5 times an hour and 10 times a day', async () => {
    let account = await t.createAccount();
    const to = newNumber();
    /** A start ended by five wrong checks, so that the next one is a start and not a resend. */
    const startAndSpend = async () => {
      const { verification } = await start(account, { to });
      for (let i = 0; i < 5; i++) await check(account, verification, '0000');
    };
    for (let i = 0; i < 5; i++) await startAndSpend();
    const hourly = await api(account, 'POST', '/v1/verifications', { to });
    expect(hourly.status).toBe(429);
    expect(hourly.body.error.code).toBe('rate_limited');
    // When the first of the five leaves the hour (real time runs beside the test clock's moves).
    expect(Number(hourly.headers.get('retry-after'))).toBeGreaterThan(3600 - 60);
    expect(Number(hourly.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    // Another number of the same account is not held back.
    await start(account, { to: newNumber() });
    t.clock.advance(3_600_000);
    account = await t.login(account);
    for (let i = 0; i < 5; i++) await startAndSpend();
    t.clock.advance(3_600_000);
    account = await t.login(account);
    const daily = await api(account, 'POST', '/v1/verifications', { to });
    expect(daily.status).toBe(429);
    expect(Number(daily.headers.get('retry-after'))).toBeGreaterThan(22 * 3600 - 60);
    expect(Number(daily.headers.get('retry-after'))).toBeLessThanOrEqual(22 * 3600);
  });

  it('decides starts arriving together one by one: one start per number, the others inside its cool-down', async () => {
    const account = await t.createAccount();
    const [a, b, c] = [newNumber(), newNumber(), newNumber()];
    const together = (to: string) =>
      t.tern.services.verifications.start(account.account, { to }).then(
        (view) => view.status,
        (error: { code: string; retryAfterSeconds?: number }) => `${error.code} ${error.retryAfterSeconds}`,
      );
    // The first takes the transaction; the others wait and share the next one.
    const answers = await Promise.all([a, b, c, a, b, a, c].map(together));
    expect(answers).toEqual([
      'pending',
      'pending',
      'pending',
      'rate_limited 30',
      'rate_limited 30',
      'rate_limited 30',
      'rate_limited 30',
    ]);
    const rows = await t.tern.deps.prisma.verification.findMany({ where: { accountId: account.account } });
    expect(rows.map((row) => [row.to, row.sends]).sort()).toEqual([a, b, c].sort().map((to) => [to, 1]));
    t.clock.advance(30_000);
    expect(await Promise.all([c, c, a].map(together))).toEqual(['pending', 'rate_limited 60', 'pending']);
    const resent = await t.tern.deps.prisma.verification.findMany({ where: { accountId: account.account } });
    expect(Object.fromEntries(resent.map((row) => [row.to, row.sends]))).toEqual({ [a]: 2, [b]: 1, [c]: 2 });
  });

  it('leaves nothing behind when the send path refuses the message', async () => {
    const account = await t.createAccount();
    await t.tern.services.accountQuotas.setLimits(account.account, { allowedCountries: ['BR'] });
    const refused = await api(account, 'POST', '/v1/verifications', { to: '447700900123' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'destination_not_allowed' }]);
    expect(await t.tern.deps.prisma.verification.count({ where: { accountId: account.account } })).toBe(0);
  });
});

describe('a code waiting for a worker', () => {
  it('is kept sealed in its row until a worker hands it over, then cleared', async () => {
    const env = { CARRIER: 'smpp', SMPP_URL: smsc.url(), SMPP_RECONNECT_MS: '50' };
    const api = await startTern({ role: 'api', env });
    try {
      const account = await api.createAccount();
      const to = newNumber();
      const started = await api.request('POST', '/v1/verifications', { token: account.token, body: { to } });
      expect(started.status).toBe(201);
      const read = await api.request('GET', `/v1/verifications/${started.body.verification}`, {
        token: account.token,
      });
      // No worker has run: what a crash before the hand-over leaves, a queued row with its sealed text.
      const waiting = await api.tern.deps.prisma.message.findUniqueOrThrow({
        where: { id: read.body.message },
      });
      expect(waiting).toMatchObject({ status: 'queued', text: 'O seu código de verificação é ******' });
      expect(waiting.sealedText).toMatch(/^v1\./);
      const workers = await startTern({ role: 'worker', sharing: api, env });
      try {
        const code = await codeAt(to);
        await waitFor(async () => {
          const row = await api.tern.deps.prisma.message.findUniqueOrThrow({
            where: { id: read.body.message },
          });
          return row.status !== 'queued' && row.sealedText === null ? true : null;
        });
        const checked = await api.request('POST', `/v1/verifications/${started.body.verification}/check`, {
          token: account.token,
          body: { code },
        });
        expect(checked.body.status).toBe('approved');
      } finally {
        await workers.stop();
      }
    } finally {
      await api.stop();
    }
  });
});

describe('statistics', () => {
  it('counts started, approved and expired, and the conversion by country', async () => {
    const account = await t.createAccount();
    const from = t.clock.now().toISOString();
    const [brazil, france] = [newNumber(), '33612345699'];
    const approved = await start(account, { to: brazil, ttl: 60 });
    await check(account, approved.verification, await codeAt(brazil));
    await start(account, { to: newNumber(), ttl: 60 });
    await start(account, { to: france, ttl: 60 });
    t.clock.advance(60_000);
    const to = new Date(t.clock.now().getTime() + 1_000).toISOString();
    const stats = await api(account, 'GET', `/v1/stats/verifications?from=${from}&to=${to}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ started: 3, approved: 1, expired: 2, conversion: 1 / 3 });
    expect(stats.body.countries).toEqual([
      { country: 'BR', started: 2, approved: 1, expired: 1, conversion: 0.5 },
      { country: 'FR', started: 1, approved: 0, expired: 1, conversion: 0 },
    ]);
    const tooLong = await api(account, 'GET', `/v1/stats/verifications?from=2020-01-01T00:00:00Z&to=${to}`);
    expect(tooLong.status).toBe(422);
    const other = await api(await t.createAccount(), 'GET', `/v1/stats/verifications?from=${from}&to=${to}`);
    expect(other.body).toMatchObject({ started: 0, conversion: null, countries: [] });
  });
});

describe('GraphQL', () => {
  it('starts, reads and checks a verification', async () => {
    const account = await t.createAccount();
    const to = newNumber();
    const started = await t.graphql(
      `mutation ($input: StartVerificationInput!) { startVerification(input: $input) { __typename ... on Verification { id status to } } }`,
      { input: { to, codeLength: 5, ttl: 300 } },
      account.token,
    );
    const { id } = started.body.data.startVerification;
    const code = await codeAt(to);
    const checked = await t.graphql(
      `mutation ($id: ID!, $code: String!) { checkVerification(id: $id, input: { code: $code }) { __typename ... on VerificationCheck { status } } }`,
      { id, code },
      account.token,
    );
    expect(checked.body.data.checkVerification).toEqual({
      __typename: 'VerificationCheck',
      status: 'approved',
    });
    const read = await t.graphql(
      `query ($id: ID!) { verification(id: $id) { __typename ... on Verification { status attempts approvedAt } } }`,
      { id },
      account.token,
    );
    expect(read.body.data.verification).toMatchObject({ status: 'approved', attempts: 1 });
    expect(JSON.stringify([started.body, checked.body, read.body])).not.toContain(code);
  });

  it('runs the login flow of docs/verifications.md with the typed client', async () => {
    const account = await t.createAccount();
    const client = new TernClient({ url: `${t.url}/graphql`, token: account.token });
    const to = newNumber();
    const { start_verification: started } = await client.request(StartVerificationDocument, {
      input: { to, codeLength: 6, ttl: 300 },
    });
    if (started.__typename !== 'Verification') throw new Error(`refused: ${JSON.stringify(started)}`);
    // A resend inside the cool-down is a request error, as the guide handles it.
    const early = await client
      .request(StartVerificationDocument, { input: { to } })
      .catch((error: unknown) => error);
    expect(early).toBeInstanceOf(TernClientError);
    expect((early as TernClientError).code).toBe('rate_limited');
    const code = await codeAt(to);
    const { check_verification: checked } = await client.request(CheckVerificationDocument, {
      id: started.verification,
      input: { code },
    });
    expect(checked).toMatchObject({ __typename: 'VerificationCheck', status: 'approved' });
    const { verification } = await client.request(VerificationDocument, { id: started.verification });
    expect(verification).toMatchObject({ status: 'approved', attempts: 1, sends: 1 });
  });
});
