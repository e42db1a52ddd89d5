import { Secret, TOTP, URI } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE_ATTEMPTS } from '../src/modules/accounts/two-factor-login.js';
import { sql } from './support/database.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;

beforeAll(async () => {
  // Each test logs in from addresses of its own (X-Forwarded-For), so the login lock of one test never meets another's.
  t = await startTern({ role: 'api', env: { TRUST_PROXY: 'true' } });
});
afterAll(() => t.stop());

// A new address each call, so that one test's login lock never meets another's (or its own).
let addresses = 0;
const address = () => `198.51.${100 + Math.floor(addresses / 250)}.${(addresses++ % 250) + 1}`;
const STEP_MS = 30_000;

interface Enrolled extends TestAccount {
  totp: TOTP;
  recoveryCodes: string[];
}

/** A code of the authenticator app at the harness clock's time, `steps` steps away. */
const codeOf = (totp: TOTP, steps = 0) =>
  totp.generate({ timestamp: t.clock.now().getTime() + steps * STEP_MS });

function login(account: TestAccount, otp?: string, from = address()) {
  return t.request('POST', '/v1/auth/login', {
    body: { email: account.email, password: account.password, ...(otp === undefined ? {} : { otp }) },
    headers: { 'x-forwarded-for': from },
  });
}

/** Moves the harness clock to the start of a later time step, so that its codes are new. */
function nextStep(): void {
  const now = t.clock.now().getTime();
  t.clock.advance(STEP_MS - (now % STEP_MS) + 1_000);
}

async function enrol(account: TestAccount): Promise<Enrolled> {
  const setUp = await t.request('POST', '/v1/settings/two-factor', { token: account.token });
  expect(setUp.status, JSON.stringify(setUp.body)).toBe(200);
  const totp = URI.parse(setUp.body.otpauth_url) as TOTP;
  const confirmed = await t.request('POST', '/v1/settings/two-factor/confirm', {
    token: account.token,
    body: { code: codeOf(totp) },
  });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return { ...account, totp, recoveryCodes: confirmed.body.recovery_codes };
}

describe('setting two-factor login up', () => {
  it('goes from a secret to a confirmed code to recovery codes, as an authenticator app does it', async () => {
    const alice = await t.createAccount();
    const setUp = await t.request('POST', '/v1/settings/two-factor', { token: alice.token });
    expect(setUp.status).toBe(200);
    expect(setUp.body).toEqual({
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      otpauth_url: expect.stringMatching(/^otpauth:\/\/totp\//),
      request: expect.any(String),
    });

    // The URI is what a QR code carries: RFC 6238 with SHA-1, 6 digits, 30-second steps.
    const totp = URI.parse(setUp.body.otpauth_url) as TOTP;
    expect(totp).toBeInstanceOf(TOTP);
    expect({
      issuer: totp.issuer,
      label: totp.label,
      algorithm: totp.algorithm,
      digits: totp.digits,
      period: totp.period,
    }).toEqual({
      issuer: 'Tern',
      label: alice.email,
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
    });
    expect(totp.secret.base32).toBe(setUp.body.secret);

    // Not in force yet.
    expect((await t.request('GET', '/v1/settings', { token: alice.token })).body.two_factor_enabled).toBe(
      false,
    );
    expect((await login(alice)).status).toBe(200);

    const wrong = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: alice.token,
      body: { code: codeOf(totp, 5) },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'code', issue: 'invalid_value' }],
    });

    // A code typed from the secret (not the URI) works the same.
    const typed = new TOTP({ secret: Secret.fromBase32(setUp.body.secret) });
    const confirmed = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: alice.token,
      body: { code: typed.generate({ timestamp: t.clock.now().getTime() }) },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({
      account: alice.account,
      timezone: 'UTC',
      default_sender: null,
      two_factor_enabled: true,
      recovery_codes: expect.any(Array),
      request: expect.any(String),
    });
    const codes: string[] = confirmed.body.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[2-9a-hj-km-np-z]{4}(-[2-9a-hj-km-np-z]{4}){3}$/);
    expect((await t.request('GET', '/v1/settings', { token: alice.token })).body.two_factor_enabled).toBe(
      true,
    );

    // Neither the secret nor a recovery code is stored as it is.
    const stored = await sql(
      t.database.url,
      `SELECT (SELECT secret_sealed FROM two_factor_secrets WHERE account_id = $1) AS sealed,
              (SELECT json_agg(code_hash) FROM recovery_codes WHERE account_id = $1) AS hashes`,
      [alice.account],
    );
    expect(stored.rows[0].sealed).toMatch(/^v1\./);
    expect(stored.rows[0].sealed).not.toContain(setUp.body.secret);
    expect(stored.rows[0].hashes).toHaveLength(10);
    const storedText = JSON.stringify(stored.rows[0]);
    for (const code of codes) expect(storedText).not.toContain(code.replaceAll('-', ''));
  });

  it('refuses to set up again while on, and to confirm what was never set up (409 invalid_state)', async () => {
    const bob = await t.createAccount();
    const early = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: bob.token,
      body: { code: '123456' },
    });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('invalid_state');

    const enrolled = await enrol(bob);
    const again = await t.request('POST', '/v1/settings/two-factor', { token: bob.token });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');
    nextStep();
    const reconfirm = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: bob.token,
      body: { code: codeOf(enrolled.totp) },
    });
    expect(reconfirm.status).toBe(409);
  });

  it('replaces a set-up that was never confirmed: only the newest secret confirms', async () => {
    const carol = await t.createAccount();
    const first = URI.parse(
      (await t.request('POST', '/v1/settings/two-factor', { token: carol.token })).body.otpauth_url,
    ) as TOTP;
    const second = URI.parse(
      (await t.request('POST', '/v1/settings/two-factor', { token: carol.token })).body.otpauth_url,
    ) as TOTP;
    expect(
      (
        await t.request('POST', '/v1/settings/two-factor/confirm', {
          token: carol.token,
          body: { code: codeOf(first) },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await t.request('POST', '/v1/settings/two-factor/confirm', {
          token: carol.token,
          body: { code: codeOf(second) },
        })
      ).status,
    ).toBe(200);
  });
});

describe('login with two-factor login on', () => {
  it('asks for otp only once the password is right', async () => {
    const dave = await enrol(await t.createAccount());
    const without = await login(dave);
    expect(without.status).toBe(401);
    expect(without.body.error).toEqual({ code: 'otp_required', message: expect.stringContaining('otp') });

    const wrongPassword = await t.request('POST', '/v1/auth/login', {
      body: { email: dave.email, password: 'not the password' },
    });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.error.code).toBe('invalid_credentials');

    nextStep();
    const ok = await login(dave, codeOf(dave.totp));
    expect(ok.status).toBe(200);
    expect((await t.request('GET', '/v1/settings', { token: ok.body.token })).status).toBe(200);
  });

  it('accepts each code once, and the steps either side of now only', async () => {
    const erin = await enrol(await t.createAccount());
    // The confirmation used this step's code.
    const replayed = await login(erin, codeOf(erin.totp));
    expect(replayed.status).toBe(401);
    expect(replayed.body.error.code).toBe('invalid_credentials');

    nextStep();
    const code = codeOf(erin.totp);
    expect((await login(erin, code)).status).toBe(200);
    expect((await login(erin, code)).status).toBe(401);

    // A phone a step behind, then a step ahead; two steps off is too far.
    nextStep();
    nextStep();
    expect((await login(erin, codeOf(erin.totp, -1))).status).toBe(200);
    expect((await login(erin, codeOf(erin.totp, 2))).status).toBe(401);
    expect((await login(erin, codeOf(erin.totp, 1))).status).toBe(200);
    // Once a later step was accepted, an earlier step's code is refused even if never used.
    expect((await login(erin, codeOf(erin.totp, 0))).status).toBe(401);
  });

  it('accepts a code once even when two processes get it at the same moment', async () => {
    const frank = await enrol(await t.createAccount());
    const other = await startTern({ role: 'api', env: { TRUST_PROXY: 'true' }, sharing: t });
    try {
      for (let round = 0; round < 3; round += 1) {
        nextStep();
        other.clock.advance(t.clock.now().getTime() - other.clock.now().getTime());
        const code = codeOf(frank.totp);
        const attempts = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? other : t).request('POST', '/v1/auth/login', {
              body: { email: frank.email, password: frank.password, otp: code },
              headers: { 'x-forwarded-for': address() },
            }),
          ),
        );
        expect(attempts.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
      }
    } finally {
      await other.stop();
    }
  });

  it('takes each recovery code once, in place of a code of the app', async () => {
    const grace = await enrol(await t.createAccount());
    const [code, other] = grace.recoveryCodes;
    const used = await login(grace, code);
    expect(used.status).toBe(200);
    const again = await login(grace, code);
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('invalid_credentials');
    // Typed in capitals and without dashes, it is the same code.
    expect((await login(grace, other!.replaceAll('-', '').toUpperCase())).status).toBe(200);
    expect(
      (
        await sql(t.database.url, 'SELECT count(*)::int AS n FROM recovery_codes WHERE account_id = $1', [
          grace.account,
        ])
      ).rows[0].n,
    ).toBe(8);
  });

  it('counts every wrong code against the login lock of the e-mail and address', async () => {
    const heidi = await enrol(await t.createAccount());
    const from = address();
    for (let i = 0; i < 10; i += 1) {
      const wrong = await login(
        heidi,
        String((Number(codeOf(heidi.totp)) + 1 + i) % 1_000_000).padStart(6, '0'),
        from,
      );
      expect(wrong.status).toBe(401);
    }
    nextStep();
    const locked = await login(heidi, codeOf(heidi.totp), from);
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('rate_limited');
    // The lock is the pair's: the same right code from elsewhere still logs in.
    expect((await login(heidi, codeOf(heidi.totp), address())).status).toBe(200);
  });
});

describe('turning two-factor login off', () => {
  it('takes a code of the app or a recovery code, and login no longer asks for otp', async () => {
    const ivan = await enrol(await t.createAccount());
    const wrong = await t.request('DELETE', '/v1/settings/two-factor', {
      token: ivan.token,
      body: { code: 'not-a-recovery-code' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details).toEqual([{ field: 'code', issue: 'invalid_value' }]);

    const off = await t.request('DELETE', '/v1/settings/two-factor', {
      token: ivan.token,
      body: { code: ivan.recoveryCodes[3] },
    });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({
      account: ivan.account,
      timezone: 'UTC',
      default_sender: null,
      two_factor_enabled: false,
      send_window: null,
      message_validity: 86400,
      limits: { daily_segments: null, monthly_segments: null, allowed_countries: [], timezone: 'UTC' },
      usage: { today_segments: 0, month_segments: 0 },
      senders: [],
      request: expect.any(String),
    });
    expect((await login(ivan)).status).toBe(200);
    const rows = await sql(
      t.database.url,
      `SELECT (SELECT count(*) FROM two_factor_secrets WHERE account_id = $1)::int AS secrets, (SELECT count(*) FROM recovery_codes WHERE account_id = $1)::int AS codes`,
      [ivan.account],
    );
    expect(rows.rows[0]).toEqual({ secrets: 0, codes: 0 });

    const notOn = await t.request('DELETE', '/v1/settings/two-factor', {
      token: ivan.token,
      body: { code: '123456' },
    });
    expect(notOn.status).toBe(409);
    expect(notOn.body.error.code).toBe('invalid_state');

    const judy = await enrol(await t.createAccount());
    nextStep();
    expect(
      (
        await t.request('DELETE', '/v1/settings/two-factor', {
          token: judy.token,
          body: { code: codeOf(judy.totp) },
        })
      ).status,
    ).toBe(200);
  });

  it(`refuses for a while after ${CODE_ATTEMPTS} codes were tried, however many at once`, async () => {
    const kate = await enrol(await t.createAccount());
    const attempts = await Promise.all(
      Array.from({ length: CODE_ATTEMPTS + 5 }, (_, i) =>
        t.request('DELETE', '/v1/settings/two-factor', {
          token: kate.token,
          body: { code: `wrong-code-${i}` },
        }),
      ),
    );
    const statuses = attempts.map((attempt) => attempt.status);
    expect(statuses.filter((status) => status === 422)).toHaveLength(CODE_ATTEMPTS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    const refused = await t.request('DELETE', '/v1/settings/two-factor', {
      token: kate.token,
      body: { code: kate.recoveryCodes[0] },
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The refused attempt did not use the recovery code up.
    expect(
      (
        await sql(t.database.url, 'SELECT count(*)::int AS n FROM recovery_codes WHERE account_id = $1', [
          kate.account,
        ])
      ).rows[0].n,
    ).toBe(10);
  });
});

describe('with an API key', () => {
  it('cannot set up, confirm or turn off two-factor login (403), over /v1 and GraphQL', async () => {
    const owner = await t.createAccount();
    const created = await t.request('POST', '/v1/api-keys', { token: owner.token, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;

    const setUp = await t.request('POST', '/v1/settings/two-factor', { token: key });
    expect(setUp.status).toBe(403);
    expect(setUp.body.error.code).toBe('forbidden');
    const graphql = await t.request('POST', '/graphql', {
      token: key,
      body: { query: 'mutation { setUpTwoFactor { __typename } }' },
    });
    expect(graphql.body.errors[0].extensions.code).toBe('forbidden');

    // Set up with the login token; the key can neither confirm it nor, once on, turn it off.
    const enrolled = await t.request('POST', '/v1/settings/two-factor', { token: owner.token });
    const totp = URI.parse(enrolled.body.otpauth_url) as TOTP;
    const confirm = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: key,
      body: { code: codeOf(totp) },
    });
    expect(confirm.status).toBe(403);
    const on = await enrol(owner);
    const off = await t.request('DELETE', '/v1/settings/two-factor', {
      token: key,
      body: { code: on.recoveryCodes[0] },
    });
    expect(off.status).toBe(403);
    const settings = await t.request('GET', '/v1/settings', { token: owner.token });
    expect(settings.body.two_factor_enabled).toBe(true);
  });
});

describe('GraphQL', () => {
  it('has the same operations, and login answers OtpRequiredError', async () => {
    const leo = await t.createAccount();
    const setUp = await t.graphql(
      'mutation { setUpTwoFactor { __typename ... on TwoFactorSetup { secret otpauthUrl } } }',
      {},
      leo.token,
    );
    const totp = URI.parse(setUp.body.data.setUpTwoFactor.otpauthUrl) as TOTP;
    const confirm = await t.graphql(
      'mutation ($input: TwoFactorCodeInput!) { confirmTwoFactor(input: $input) { __typename ... on TwoFactorActivation { twoFactorEnabled recoveryCodes } ... on Error { code } } }',
      { input: { code: codeOf(totp) } },
      leo.token,
    );
    expect(confirm.body.data.confirmTwoFactor).toMatchObject({
      __typename: 'TwoFactorActivation',
      twoFactorEnabled: true,
    });
    expect(confirm.body.data.confirmTwoFactor.recoveryCodes).toHaveLength(10);

    const LOGIN =
      'mutation ($input: LoginInput!) { login(input: $input) { __typename ... on Token { token } ... on Error { code message } } }';
    const noOtp = await t.graphql(LOGIN, { input: { email: leo.email, password: leo.password } });
    expect(noOtp.body.data.login).toMatchObject({ __typename: 'OtpRequiredError', code: 'otp_required' });
    nextStep();
    const withOtp = await t.graphql(LOGIN, {
      input: { email: leo.email, password: leo.password, otp: codeOf(totp) },
    });
    expect(withOtp.body.data.login.__typename).toBe('Token');

    const off = await t.graphql(
      'mutation ($input: TwoFactorCodeInput!) { disableTwoFactor(input: $input) { __typename ... on Settings { twoFactorEnabled } ... on Error { code } } }',
      { input: { code: confirm.body.data.confirmTwoFactor.recoveryCodes[0] } },
      leo.token,
    );
    expect(off.body.data.disableTwoFactor).toEqual({ __typename: 'Settings', twoFactorEnabled: false });
  });
});
