import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

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
    const before = Math.floor(Date.now() / 1000);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await t.request('GET', '/v1/settings', { token: account.token });
      statuses.push(response.status);
      const headers = limitHeaders(response.headers);
      expect(headers.limit).toBe('5');
      expect(headers.remaining).toBe(String(4 - i));
      expect(headers.reset).toBeGreaterThanOrEqual(before);
      expect(headers.reset).toBeLessThanOrEqual(before + 61);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await t.request('GET', '/v1/settings', { token: account.token });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String) }, request: refused.headers.get('x-request-id') });
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
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? t : second).request('GET', '/v1/settings', { token: burst.token })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(25);
  });

  it('keeps accounts apart', async () => {
    const fresh = await t.createAccount();
    const response = await t.request('GET', '/v1/settings', { token: fresh.token });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});
