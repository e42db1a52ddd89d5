import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let victim: TestAccount;

beforeAll(async () => {
  t = await startTern({ env: { TRUST_PROXY: 'true' } });
  victim = await t.createAccount('victim@example.com', 'the right password');
});
afterAll(() => t.stop());

const login = (email: string, password: string, address: string) =>
  t.request('POST', '/v1/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': address } });

describe('repeated login failures', () => {
  it('slow down, then lock the e-mail for that address only, for a while', async () => {
    const attacker = '203.0.113.7';
    const elapsed: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const started = Date.now();
      const response = await login(victim.email, `wrong ${i}`, attacker);
      elapsed.push(Date.now() - started);
      expect(response.status).toBe(401);
    }
    // From the fourth failure on, each answer waits at least a quarter of a second longer.
    expect(elapsed[4]!).toBeGreaterThanOrEqual(250);
    expect(elapsed[6]!).toBeGreaterThanOrEqual(1_000);

    const locked = await login(victim.email, victim.password, attacker);
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('rate_limited');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);

    const elsewhere = await login(victim.email, victim.password, '198.51.100.20');
    expect(elsewhere.status).toBe(200);
  });

  it('treat an unknown e-mail exactly like a known one', async () => {
    const attacker = '203.0.113.8';
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1)
      statuses.push((await login('nobody@example.com', 'guess', attacker)).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
  });

  it('forget the failures of an address after a successful login', async () => {
    const address = '203.0.113.9';
    const other = await t.createAccount('forgetful@example.com', 'correct password');
    for (let i = 0; i < 3; i += 1) expect((await login(other.email, 'typo', address)).status).toBe(401);
    expect((await login(other.email, other.password, address)).status).toBe(200);
    // Without the reset, the eighth of these would be the eleventh failure: locked.
    for (let i = 0; i < 8; i += 1) expect((await login(other.email, 'typo again', address)).status).toBe(401);
  });

  it('check at most ten passwords of 40 attempts sent at once, so the right one 25th gets no token', async () => {
    const address = '203.0.113.11';
    const target = await t.createAccount('parallel@example.com', 'the right password');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        login(target.email, i === 24 ? target.password : `wrong ${i}`, address),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    // A 401 is a password checked and wrong, a 200 one checked and right; a 429 was refused unchecked.
    expect(
      statuses.filter((status) => status === 401).length + statuses.filter((status) => status === 200).length,
    ).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status === 200)).toEqual([]);
    expect(answers.some((answer) => answer.body.token)).toBe(false);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(30);
    expect((await login(target.email, target.password, address)).status).toBe(429);
  });

  it('lock the GraphQL login mutation the same way', async () => {
    const address = '203.0.113.10';
    const mutation = 'mutation ($input: LoginInput!) { login(input: $input) { __typename } }';
    const attempt = (password: string) =>
      t.request('POST', '/graphql', {
        body: { query: mutation, variables: { input: { email: 'gql@example.com', password } } },
        headers: { 'x-forwarded-for': address },
      });
    for (let i = 0; i < 10; i += 1)
      expect((await attempt('wrong')).body.data.login.__typename).toBe('InvalidCredentialsError');
    const locked = await attempt('wrong');
    expect(locked.status).toBe(429);
    expect(locked.body.errors[0].extensions.code).toBe('rate_limited');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('failures for one e-mail from many addresses', () => {
  /** `count` addresses of their own: no address's lock or slowdown plays a part. */
  const addresses = (block: number, count: number) =>
    Array.from({ length: count }, (_, i) => `198.18.${block}.${i + 1}`);
  const answersOf = async (email: string, from: string[]) =>
    (await Promise.all(from.map((address, i) => login(email, `wrong ${i}`, address)))).map(
      (answer) => answer.status,
    );
  const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

  it('lock it everywhere once 100 fall in an hour, until the oldest is an hour old, however they arrive', async () => {
    const target = await t.createAccount('spread@example.com', 'the right password');
    expect(await answersOf(target.email, addresses(1, 50))).toEqual(Array(50).fill(401));

    t.clock.advance(30 * 60_000);
    // Of 80 sent at once, exactly the 50 the hour has left are checked.
    const burst = await answersOf(target.email, addresses(2, 80));
    expect([count(burst, 401), count(burst, 429)]).toEqual([50, 30]);

    // Locked everywhere until the first 50 are an hour old: half an hour, not 15 minutes.
    const locked = await login(target.email, target.password, '198.18.9.1');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(29 * 60);
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(30 * 60);
    t.clock.advance(16 * 60_000);
    expect((await login(target.email, target.password, '198.18.9.2')).status).toBe(429);

    // An hour after the first 50 they leave the window; the other 50 are still in it, so only
    // 50 more are checked, and the next waits for the second 50 to leave.
    t.clock.advance(15 * 60_000);
    const later = await answersOf(target.email, addresses(3, 60));
    expect([count(later, 401), count(later, 429)]).toEqual([50, 10]);
    const lockedAgain = await login(target.email, target.password, '198.18.9.3');
    expect(lockedAgain.status).toBe(429);
    expect(Number(lockedAgain.headers.get('retry-after'))).toBeGreaterThan(28 * 60);
    expect(Number(lockedAgain.headers.get('retry-after'))).toBeLessThanOrEqual(29 * 60);

    t.clock.advance(30 * 60_000);
    // The hour now holds the 50 of a while ago only: the right password gets its token.
    expect((await login(target.email, target.password, '198.18.9.4')).status).toBe(200);
  }, 120_000);

  it('never refuse the address the owner logged in from in the last 30 days; a new address stays locked', async () => {
    const owner = await t.createAccount('owner@example.com', 'the right password');
    const home = '192.0.2.44';
    const away = '192.0.2.45';
    expect((await login(owner.email, owner.password, home)).status).toBe(200);
    t.clock.advance(20 * 24 * 60 * 60_000);
    expect((await login(owner.email, owner.password, away)).status).toBe(200);
    t.clock.advance(15 * 24 * 60 * 60_000);

    // A stranger locks the e-mail from 105 addresses of its own.
    const burst = await answersOf(owner.email, addresses(4, 105));
    expect([count(burst, 401), count(burst, 429)]).toEqual([100, 5]);

    // The address of 15 days ago still logs in, with the right password only; a new one and
    // the address of 35 days ago are refused until the stranger's attempts leave the hour.
    expect((await login(owner.email, 'a typo', away)).status).toBe(401);
    expect((await login(owner.email, owner.password, away)).status).toBe(200);
    const stranger = await login(owner.email, owner.password, '192.0.2.46');
    expect(stranger.status).toBe(429);
    expect(stranger.body.error.code).toBe('rate_limited');
    expect((await login(owner.email, owner.password, home)).status).toBe(429);
  }, 120_000);
});
