import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pauseSettingsPolls, startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let second: TestTern;

beforeAll(async () => {
  t = await startTern({ env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_S: '60' } });
  second = await startTern({ env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_S: '60' }, sharing: t });
});
afterAll(async () => {
  await second.stop();
  await t.stop();
});

function limitHeaders(headers: Headers) {
  return {
    limit: headers.get('x-ratelimit-limit'),
    remaining: headers.get('x-ratelimit-remaining'),
    reset: Number(headers.get('x-ratelimit-reset')),
  };
}

describe('the per-account budget', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await t.createAccount();
  });

  it('counts down on every response and answers the sixth call with 429 and all four headers', async () => {
    const statuses: number[] = [];
    // The window opens with the first counted call, somewhere between these two instants.
    const opening = { earliest: Date.now(), latest: 0 };
    for (let i = 0; i < 5; i += 1) {
      const response = await t.request('GET', '/v1/settings', { token: account.token });
      if (i === 0) opening.latest = Date.now();
      statuses.push(response.status);
      const headers = limitHeaders(response.headers);
      expect(headers.limit).toBe('5');
      expect(headers.remaining).toBe(String(4 - i));
      // The service adds Redis's remaining time to its own clock read before the call: a few ms early at most.
      expect(headers.reset).toBeGreaterThanOrEqual(Math.floor(opening.earliest / 1000) + 59);
      expect(headers.reset).toBeLessThanOrEqual(Math.ceil(opening.latest / 1000) + 60);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await t.request('GET', '/v1/settings', { token: account.token });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { code: 'rate_limited', message: expect.any(String) },
      request: refused.headers.get('x-request-id'),
    });
    expect(limitHeaders(refused.headers)).toMatchObject({ limit: '5', remaining: '0' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('is one budget for two API processes on the same Redis, and answers GraphQL in its own shape', async () => {
    const other = await t.createAccount();
    for (let i = 0; i < 5; i += 1) {
      const instance = i % 2 === 0 ? t : second;
      expect((await instance.request('GET', '/v1/settings', { token: other.token })).status).toBe(200);
    }
    const refused = await second.graphql('{ settings { timezone } }', {}, other.token);
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('rate_limited');
    expect(refused.body.extensions.request).toBe(refused.headers.get('x-request-id'));
    expect(limitHeaders(refused.headers)).toMatchObject({ limit: '5', remaining: '0' });
  });

  it('admits exactly the remaining count of a concurrent burst', async () => {
    const burst = await t.createAccount();
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 === 0 ? t : second).request('GET', '/v1/settings', { token: burst.token }),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(25);
  });

  it('counts a request however its path is spelt: percent-encoded, in another case, with doubled slashes', async () => {
    const spelt = await t.createAccount();
    const answers = [];
    for (const path of [
      '/%761/settings',
      '/v%31/messages',
      '/V1/settings',
      '//v1//settings',
      '/v1/settings/',
    ]) {
      answers.push(await t.request('GET', path, { token: spelt.token }));
    }
    // The router decodes the first two into /v1 routes; the others match none and get a 404.
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 404, 404]);
    expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining'))).toEqual([
      '4',
      '3',
      '2',
      '1',
      '0',
    ]);
    const refused = await t.request('GET', '/%761/settings', { token: spelt.token });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect((await t.request('GET', '/health')).status).toBe(200);
  });

  it('keeps accounts apart', async () => {
    const fresh = await t.createAccount();
    const response = await t.request('GET', '/v1/settings', { token: fresh.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});

describe('per-field limits under the budget', () => {
  let limited: TestTern;
  beforeAll(async () => {
    limited = await startTern({
      env: {
        RATE_LIMIT_SEND_MESSAGE_MAX: '3',
        RATE_LIMIT_LOGIN_MAX: '3',
        RATE_LIMIT_WINDOW_S: '60',
        TRUST_PROXY: 'true',
      },
    });
  });
  afterAll(() => limited.stop());

  const SEND = 'mutation ($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }';

  it('refuses the fourth sendMessage of an account in a window, through /v1 and GraphQL, while its other fields still work', async () => {
    const account = await limited.createAccount();
    const other = await limited.createAccount();
    const message = (n: number) => ({ to: `551199999040${n}`, message: `Hello ${n}` });
    expect(
      (await limited.request('POST', '/v1/messages/send', { token: account.token, body: message(1) })).status,
    ).toBe(202);
    expect(
      (await limited.graphql(SEND, { input: message(2) }, account.token)).body.data.sendMessage.__typename,
    ).toBe('MessageAcceptance');
    expect(
      (await limited.request('POST', '/v1/messages', { token: account.token, body: message(3) })).status,
    ).toBe(202);

    const refused = await limited.request('POST', '/v1/messages/send', {
      token: account.token,
      body: message(4),
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-limit')).toBeTruthy();
    const viaGraphQL = await limited.graphql(SEND, { input: message(5) }, account.token);
    expect(viaGraphQL.status).toBe(429);
    expect(viaGraphQL.body.errors[0].extensions.code).toBe('rate_limited');
    expect(Number(viaGraphQL.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    expect(await limited.tern.deps.prisma.message.count({ where: { accountId: account.account } })).toBe(3);
    expect(
      (
        await limited.request('POST', '/v1/messages/preview', {
          token: account.token,
          body: { message: 'Hi' },
        })
      ).status,
    ).toBe(200);
    expect((await limited.request('GET', '/v1/messages', { token: account.token })).body.total).toBe(3);
    expect(
      (await limited.request('POST', '/v1/messages/send', { token: other.token, body: message(6) })).status,
    ).toBe(202);
  });

  it('counts each aliased sendMessage of one document, though the budget counts the request once', async () => {
    const account = await limited.createAccount();
    const sends = [1, 2, 3, 4, 5].map(
      (n) => `m${n}: sendMessage(input: { to: "55119999904${n}0", message: "Hi" }) { __typename }`,
    );
    const response = await limited.graphql(`mutation { ${sends.join(' ')} }`, {}, account.token);
    expect(response.status).toBe(429);
    expect(response.body.errors[0]).toMatchObject({ path: ['m4'], extensions: { code: 'rate_limited' } });
    expect(await limited.tern.deps.prisma.message.count({ where: { accountId: account.account } })).toBe(3);
  });

  it('refuses the fourth login from one address in a window, not from another address', async () => {
    // Created without logging in: the harness's own logins come from this test's address.
    const email = 'field-limit@example.com';
    const password = 'correct horse battery';
    await limited.tern.services.accounts.create({ email, password });
    const login = (address: string) =>
      limited.request('POST', '/v1/auth/login', {
        body: { email, password },
        headers: { 'x-forwarded-for': address },
      });
    for (let i = 0; i < 3; i += 1) expect((await login('203.0.113.7')).status).toBe(200);
    const refused = await login('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await login('203.0.113.8')).status).toBe(200);
  });
});

describe('per-field limits under a burst', () => {
  let first: TestTern;
  let other: TestTern;
  beforeAll(async () => {
    const env = {
      RATE_LIMIT_SEND_MESSAGE_MAX: '300',
      RATE_LIMIT_LOGIN_MAX: '30',
      RATE_LIMIT_WINDOW_S: '60',
      TRUST_PROXY: 'true',
    };
    first = await startTern({ env });
    other = await startTern({ env, sharing: first });
  });
  afterAll(async () => {
    await other.stop();
    await first.stop();
  });

  it('admit exactly 300 sendMessage of six parallel requests of 10 batched operations of 30 aliases, through two processes', async () => {
    const account = await first.createAccount();
    const aliases = Array.from(
      { length: 30 },
      (_, i) =>
        `m${i}: sendMessage(input: { to: "55119999906${String(i).padStart(2, '0')}", message: "Burst" }) { __typename }`,
    );
    const batch = Array.from({ length: 10 }, () => ({ query: `mutation { ${aliases.join(' ')} }` }));
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 === 0 ? first : other).request('POST', '/graphql', { token: account.token, body: batch }),
      ),
    );
    for (const response of responses) expect(response.body).toHaveLength(10);
    const refusals = responses
      .flatMap((response) => response.body as any[])
      .filter((result) => result.errors?.[0]?.extensions?.code === 'rate_limited');
    // Each refused operation stops at its first refused alias; 1,800 calls, 300 admitted.
    expect(refusals.length).toBeGreaterThanOrEqual(50);
    expect(await first.tern.deps.prisma.message.count({ where: { accountId: account.account } })).toBe(300);
    const after = await other.request('POST', '/v1/messages/send', {
      token: account.token,
      body: { to: '5511999990699', message: 'One more' },
    });
    expect(after.status).toBe(429);
  }, 60_000);

  it('admit exactly 30 logins of 40 sent at once from one address, through two processes', async () => {
    // Forty e-mails, so that the login lock (per e-mail and address) plays no part: each answer
    // but the field limit's 429 is a 401 for an unknown e-mail.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? first : other).request('POST', '/v1/auth/login', {
          body: { email: `burst-${i}@example.com`, password: 'a guess at it' },
          headers: { 'x-forwarded-for': '198.51.100.40' },
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(30);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(10);
  }, 60_000);
});

describe('credentials nobody knows yet', () => {
  let keyed: TestTern;
  let owner: TestAccount;
  let key: string;
  beforeAll(async () => {
    // Only the API runs, so every statement it makes is one this test caused.
    keyed = await startTern({
      role: 'api',
      env: { RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_S: '60', TRUST_PROXY: 'true' },
    });
    owner = await keyed.createAccount();
    key = (await keyed.request('POST', '/v1/api-keys', { token: owner.token, body: { name: 'Server' } })).body
      .key;
  });
  afterAll(() => keyed.stop());

  const from = (address: string, credential?: string) =>
    keyed.request('GET', '/v1/settings', { token: credential, headers: { 'x-forwarded-for': address } });
  const guessedKey = () =>
    `tern_live_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;

  it('are charged to the address first: over its budget, refused without a PostgreSQL lookup', async () => {
    // Every statement Tern sends PostgreSQL takes a connection from its pool. The settings'
    // once-a-second polls are the statements no request causes; they rest meanwhile.
    pauseSettingsPolls(keyed);
    let statements = 0;
    keyed.tern.deps.pool.on('acquire', () => {
      statements += 1;
    });
    const statuses: number[] = [];
    for (let i = 0; i < 110; i += 1) statuses.push((await from('203.0.113.50', guessedKey())).status);
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(100).fill(429)]);
    // The ten within the address's budget were looked up; the hundred beyond it were not.
    expect(statements).toBe(10);
  });

  it('charge a key found valid to its account, giving the address its request back', async () => {
    const remaining = (response: { headers: Headers }) =>
      Number(response.headers.get('x-ratelimit-remaining'));
    const before = remaining(await from('203.0.113.60', owner.token));
    const fresh = await from('203.0.113.51', key);
    expect(fresh.status).toBe(200);
    expect(remaining(fresh)).toBe(before - 1);
    // The address spent nothing on it: this is its first counted request.
    expect(remaining(await from('203.0.113.51'))).toBe(9);
  });

  it('let a key this process has found valid, and a login token, through an address over its budget', async () => {
    // 203.0.113.50 spent its budget above; the key is known since the test before.
    const viaKey = await from('203.0.113.50', key);
    expect(viaKey.status).toBe(200);
    const viaToken = await from('203.0.113.50', owner.token);
    expect(viaToken.status).toBe(200);
    expect(Number(viaToken.headers.get('x-ratelimit-remaining'))).toBe(
      Number(viaKey.headers.get('x-ratelimit-remaining')) - 1,
    );
  });

  it('refuse a revoked key at once, even one this process knew, and forget it', async () => {
    const other = await keyed.request('POST', '/v1/api-keys', { token: owner.token, body: { name: 'Gone' } });
    expect((await from('203.0.113.52', other.body.key)).status).toBe(200);
    await keyed.tern.services.apiKeys.revoke(owner.account, other.body.api_key, 'operator');
    expect((await from('203.0.113.52', other.body.key)).status).toBe(401);
    // Forgotten: from a spent address it is refused as any unknown key, without a lookup.
    expect((await from('203.0.113.50', other.body.key)).status).toBe(429);
  });
});
