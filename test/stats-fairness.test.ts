import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// Statistics of one account must not stall the others: its reads run at most
// STATS_CONCURRENCY_PER_ACCOUNT at once over every process, on a pool of their own, within a
// statement timeout, and each is charged its days times its groups.

/** Holds every statistics read of the totals table until released: a read that is slow on demand. */
async function lockTotals(directUrl: string) {
  const client = new pg.Client({ connectionString: directUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE message_stat_totals IN ACCESS EXCLUSIVE MODE');
  return async () => {
    await client.query('COMMIT');
    await client.end();
  };
}

const WEEK = 'from=2026-01-01T00:00:00Z&to=2026-01-08T00:00:00Z';

describe('statistics reads running at once', () => {
  let first: TestTern;
  let second: TestTern;
  let alice: TestAccount;
  let bob: TestAccount;

  beforeAll(async () => {
    // Two statistics reads per account; one statistics connection per process; two for the rest.
    const env = {
      STATS_CONCURRENCY_PER_ACCOUNT: '2',
      STATS_POOL_SIZE: '1',
      DATABASE_POOL_SIZE: '2',
      STATS_STATEMENT_TIMEOUT_MS: '60000',
    };
    first = await startTern({ role: 'api', env });
    second = await startTern({ role: 'api', env, sharing: first });
    [alice, bob] = await Promise.all([first.createAccount(), first.createAccount()]);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('admits exactly the bound over two processes, refuses the rest 429, and leaves other accounts their connections', async () => {
    const release = await lockTotals(first.database.directUrl);
    const answers: { status: number; body: any }[] = [];
    const pending = Array.from({ length: 6 }, (_, index) =>
      (index % 2 === 0 ? first : second)
        .request('GET', `/v1/stats/messages?${WEEK}`, { token: alice.token })
        .then((answer) => {
          answers.push(answer);
          return answer;
        }),
    );
    try {
      // The reads that got no slot are answered while the two that did wait for the lock.
      await waitFor(async () => (answers.length >= 4 ? true : null));
      expect(answers.map((answer) => answer.status)).toEqual([429, 429, 429, 429]);
      expect(answers[0]!.body.error.code).toBe('rate_limited');
      expect(answers[0]!.body.error.message).toContain('2 statistics reads running');
      // Another account, meanwhile, reads and sends on the connections statistics cannot take.
      for (const tern of [first, second]) {
        const settings = await tern.request('GET', '/v1/settings', { token: bob.token });
        expect(settings.status).toBe(200);
        // (A send would wait for the lock itself: it counts into the very table held here.)
        const login = await tern.request('POST', '/v1/auth/login', {
          body: { email: bob.email, password: bob.password },
        });
        expect(login.status).toBe(200);
        const messages = await tern.request('GET', '/v1/messages', { token: bob.token });
        expect(messages.status).toBe(200);
      }
      expect(answers).toHaveLength(4);
    } finally {
      await release();
    }
    const all = await Promise.all(pending);
    expect(all.filter((answer) => answer.status === 200)).toHaveLength(2);
    expect(all.filter((answer) => answer.status === 429)).toHaveLength(4);
    // The slots are given back: the next read is admitted.
    expect((await first.request('GET', `/v1/stats/messages?${WEEK}`, { token: alice.token })).status).toBe(
      200,
    );
  });
});

describe('a statistics read past its time limit', () => {
  let t: TestTern;
  let alice: TestAccount;

  beforeAll(async () => {
    t = await startTern({ role: 'api', env: { STATS_STATEMENT_TIMEOUT_MS: '50' } });
    alice = await t.createAccount();
  });
  afterAll(() => t?.stop());

  it('answers 503 service_unavailable saying so, in /v1 and GraphQL, never internal_error', async () => {
    const release = await lockTotals(t.database.directUrl);
    try {
      const rest = await t.request('GET', `/v1/stats/messages?${WEEK}`, { token: alice.token });
      expect(rest.status).toBe(503);
      expect(rest.body.error.code).toBe('service_unavailable');
      expect(rest.body.error.message).toContain('took longer than 50 ms');
      expect(rest.headers.get('retry-after')).toBe('5');
      const graphql = await t.graphql(
        '{ messageStats(from: "2026-01-01T00:00:00Z", to: "2026-01-08T00:00:00Z") { ... on MessageStats { totals { messages } } } }',
        {},
        alice.token,
      );
      expect(graphql.body.errors[0].extensions.code).toBe('service_unavailable');
    } finally {
      await release();
    }
    expect((await t.request('GET', `/v1/stats/messages?${WEEK}`, { token: alice.token })).status).toBe(200);
  });
});

describe('what statistics reads cost', () => {
  let t: TestTern;
  let alice: TestAccount;
  let bob: TestAccount;

  beforeAll(async () => {
    t = await startTern({
      role: 'api',
      env: { STATS_BUDGET: '400', STATS_CONCURRENCY_PER_ACCOUNT: '20' },
    });
    [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  });
  afterAll(() => t?.stop());

  const MONTH = { from: '2026-01-01T00:00:00Z', to: '2026-01-31T00:00:00Z' };

  it('charges each aliased read its days times its groups: 30 days by country cost 60, so 6 of 10 pass 400', async () => {
    const aliases = Array.from(
      { length: 10 },
      (_, index) =>
        `s${index}: messageStats(from: $from, to: $to, groupBy: [COUNTRY]) { ... on MessageStats { totals { messages } } }`,
    ).join('\n');
    const answer = await t.graphql(
      `query ($from: DateTime, $to: DateTime) { ${aliases} }`,
      MONTH,
      alice.token,
    );
    // One refusal nulls the document (its fields are non-null), so the first is the one told.
    expect(answer.body.errors[0].extensions.code).toBe('rate_limited');
    expect(answer.body.errors[0].message).toContain('days times their groups');
    // Six passed (360): 30 days unsplit (30) fit the 40 left; then 11 days do not, 10 days do.
    const times = await t.graphql(
      'query ($from: DateTime, $to: DateTime) { deliveryTimes(from: $from, to: $to) { ... on DeliveryTimes { delivered } } }',
      MONTH,
      alice.token,
    );
    expect(times.body.data.deliveryTimes).toEqual({ delivered: 0 });
    const over = await t.request('GET', `/v1/stats/messages?from=${MONTH.from}&to=2026-01-12T00:00:00Z`, {
      token: alice.token,
    });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const last = await t.request('GET', `/v1/stats/messages?from=${MONTH.from}&to=2026-01-11T00:00:00Z`, {
      token: alice.token,
    });
    expect(last.status).toBe(200);
    // The budget is the account's: another account's reads are untouched.
    const other = await t.request(
      'GET',
      `/v1/stats/messages?from=${MONTH.from}&to=${MONTH.to}&group_by=country`,
      { token: bob.token },
    );
    expect(other.status).toBe(200);
  });
});
