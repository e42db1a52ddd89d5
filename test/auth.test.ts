import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from './support/database.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

const SECRET = 'test-secret-that-is-at-least-32-bytes-long';
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount('alice@example.com', 'alice-password');
});
afterAll(() => t.stop());

const LOGIN = `mutation ($input: LoginInput!) {
  login(input: $input) {
    __typename
    ... on Token { token tokenType expiresIn accountId }
    ... on Error { code message }
    ... on ValidationError { details { field issue } }
  }
}`;

describe('POST /v1/auth/login', () => {
  it('answers the token object for the right e-mail and password', async () => {
    const response = await t.request('POST', '/v1/auth/login', {
      body: { email: 'alice@example.com', password: 'alice-password' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 86400,
      account: alice.account,
      request: response.headers.get('x-request-id'),
    });
    const claims = jwt.verify(response.body.token, SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims.sub).toBe(alice.account);
    expect(claims.exp! - claims.iat!).toBe(86400);
  });

  it('accepts the e-mail in another case and with spaces around it', async () => {
    const response = await t.request('POST', '/v1/auth/login', {
      body: { email: '  Alice@Example.COM ', password: 'alice-password' },
    });
    expect(response.status).toBe(200);
    expect(response.body.account).toBe(alice.account);
  });

  it.each([
    ['a wrong password', { email: 'alice@example.com', password: 'wrong-password' }],
    ['an unknown e-mail', { email: 'nobody@example.com', password: 'alice-password' }],
  ])('refuses %s with 401 invalid_credentials', async (_case, body) => {
    const response = await t.request('POST', '/v1/auth/login', { body });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: { code: 'invalid_credentials', message: expect.any(String) },
      request: expect.stringMatching(/^req_/),
    });
  });

  it('lists every missing field with 422 validation_error', async () => {
    const response = await t.request('POST', '/v1/auth/login', { body: {} });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toEqual([
      { field: 'email', issue: 'required' },
      { field: 'password', issue: 'required' },
    ]);
  });

  it('refuses a field of the wrong type with 422 invalid_value', async () => {
    const response = await t.request('POST', '/v1/auth/login', { body: { email: 42, password: 'x' } });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'email', issue: 'invalid_value' }]);
  });

  it('gives the same answer through the GraphQL login mutation', async () => {
    const ok = await t.graphql(LOGIN, { input: { email: 'alice@example.com', password: 'alice-password' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.login).toMatchObject({
      __typename: 'Token',
      tokenType: 'Bearer',
      expiresIn: 86400,
      accountId: alice.account,
    });
    expect(ok.body.extensions.request).toMatch(/^req_/);

    const wrong = await t.graphql(LOGIN, { input: { email: 'alice@example.com', password: 'nope-nope' } });
    expect(wrong.body.data.login).toMatchObject({
      __typename: 'InvalidCredentialsError',
      code: 'invalid_credentials',
    });

    const missing = await t.graphql(LOGIN, { input: { email: 'alice@example.com' } });
    expect(missing.body.data.login).toMatchObject({
      __typename: 'ValidationError',
      code: 'validation_error',
      details: [{ field: 'password', issue: 'required' }],
    });
  });
});

describe('bearer tokens', () => {
  const settings = (token?: string, headers?: Record<string, string>) =>
    t.request('GET', '/v1/settings', { token, headers });

  it('lets a fresh token through', async () => {
    expect((await settings(alice.token)).status).toBe(200);
  });

  it.each([
    ['no Authorization header', undefined, undefined],
    ['a header that is not Bearer', undefined, { authorization: 'Basic YWxpY2U6cGFzcw==' }],
    ['a malformed token', 'not-a-jwt', undefined],
    [
      'a token signed with another key',
      jwt.sign({}, 'another-secret-another-secret-xx', { subject: 'acc_x', expiresIn: 60 }),
      undefined,
    ],
    ['an unsigned token (alg none)', jwt.sign({ sub: 'acc_x' }, '', { algorithm: 'none' }), undefined],
    [
      'a token with another algorithm',
      jwt.sign({}, SECRET, { algorithm: 'HS512', subject: 'acc_x', expiresIn: 60 }),
      undefined,
    ],
  ])('answers 401 unauthorized for %s', async (_case, token, headers) => {
    const response = await settings(token, headers);
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
    expect(response.body.request).toBe(response.headers.get('x-request-id'));
  });

  it('expires a token after 24 hours, and login gives a new one', async () => {
    const login = await t.request('POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    const token = login.body.token as string;
    t.clock.advance(86_399_000);
    expect((await settings(token)).status).toBe(200);
    t.clock.advance(2_000);
    const expired = await settings(token);
    expect(expired.status).toBe(401);
    expect(expired.body.error).toEqual({ code: 'unauthorized', message: 'The token has expired' });

    const again = await t.request('POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    expect((await settings(again.body.token)).status).toBe(200);
  });

  it('guards every GraphQL operation but login', async () => {
    const response = await t.graphql('{ settings { timezone } }');
    expect(response.status).toBe(401);
    expect(response.body.data).toBeNull();
    expect(response.body.errors[0].extensions).toEqual({ code: 'unauthorized' });

    const mutation = await t.graphql(
      'mutation { updateSettings(input: { timezone: "UTC" }) { __typename } }',
      {},
      'bad-token',
    );
    expect(mutation.status).toBe(401);
    expect(mutation.body.errors[0].extensions.code).toBe('unauthorized');
  });
});

describe('the account behind a token or key', () => {
  it('refuses a token without exp, even signed with the right key', async () => {
    const forever = jwt.sign({ sub: alice.account }, SECRET, { algorithm: 'HS256' });
    const response = await t.request('GET', '/v1/settings', { token: forever });
    expect(response.status).toBe(401);
    expect(response.body.error).toEqual({ code: 'unauthorized', message: 'The token has no expiry time' });
  });

  it('refuses the token of an account that no longer exists with 401, on reads and writes alike', async () => {
    const gone = await t.createAccount();
    await sql(t.database.url, 'DELETE FROM accounts WHERE id = $1', [gone.account]);
    for (const [method, path, body] of [
      ['GET', '/v1/settings', undefined],
      ['POST', '/v1/templates', { name: 'Orphan', content: 'x' }],
      ['POST', '/v1/messages/send', { to: '5511999990123', message: 'x' }],
    ] as const) {
      const response = await t.request(method, path, { token: gone.token, body });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error).toEqual({
        code: 'unauthorized',
        message: 'The account of this token no longer exists',
      });
    }
    const graphql = await t.graphql(
      'mutation { updateSettings(input: { timezone: "UTC" }) { __typename } }',
      {},
      gone.token,
    );
    expect(graphql.status).toBe(401);
    expect(graphql.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('refuses every token and key of a disabled account at once, and login too, until it is enabled again', async () => {
    const dora = await t.createAccount();
    const key = (await t.request('POST', '/v1/api-keys', { token: dora.token, body: { name: 'k' } })).body
      .key as string;
    expect((await t.request('GET', '/v1/settings', { token: key })).status).toBe(200);

    await t.tern.services.accounts.setDisabled(dora.account, true);
    const byToken = await t.request('GET', '/v1/settings', { token: dora.token });
    expect(byToken.status).toBe(401);
    expect(byToken.body.error).toEqual({
      code: 'unauthorized',
      message: 'The account of this token is disabled',
    });
    const byKey = await t.request('POST', '/v1/templates', {
      token: key,
      body: { name: 'Nope', content: 'x' },
    });
    expect(byKey.status).toBe(401);
    expect(byKey.body.error).toEqual({
      code: 'unauthorized',
      message: 'The account of this API key is disabled',
    });
    const loginAttempt = await t.request('POST', '/v1/auth/login', {
      body: { email: dora.email, password: dora.password },
    });
    expect(loginAttempt.status).toBe(401);
    expect(loginAttempt.body.error).toEqual({
      code: 'invalid_credentials',
      message: 'The account is disabled',
    });
    const wrongPassword = await t.request('POST', '/v1/auth/login', {
      body: { email: dora.email, password: 'wrong password' },
    });
    expect(wrongPassword.body.error.message).toBe('The e-mail or password is wrong');

    await t.tern.services.accounts.setDisabled(dora.account, false);
    expect((await t.request('GET', '/v1/settings', { token: dora.token })).status).toBe(200);
    expect((await t.request('GET', '/v1/settings', { token: key })).status).toBe(200);
  });

  it('ends every login token issued before a password reset', async () => {
    const eve = await t.createAccount();
    const before = eve.token;
    await t.tern.services.accounts.resetPassword(eve.account, 'a brand new password');
    const old = await t.request('GET', '/v1/settings', { token: before });
    expect(old.status).toBe(401);
    expect(old.body.error.message).toMatch(/password reset/);
    expect(
      (await t.request('POST', '/v1/auth/login', { body: { email: eve.email, password: eve.password } }))
        .status,
    ).toBe(401);
    const fresh = await t.login({ ...eve, password: 'a brand new password' });
    expect((await t.request('GET', '/v1/settings', { token: fresh.token })).status).toBe(200);
  });
});
