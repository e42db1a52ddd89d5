import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiKeysDocument,
  CreateApiKeyDocument,
  SendMessageDocument,
  SettingsDocument,
  TernClient,
  TernClientError,
} from '../src/client/index.js';
import { MAX_API_KEYS_PER_ACCOUNT } from '../src/modules/api-keys/api-keys.js';
import { sql } from './support/database.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  t = await startTern({ role: 'api' });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
});
afterAll(() => t.stop());

const KEY = /^tern_live_[0-9A-Za-z]{40}$/;

async function createKey(owner: TestAccount, body: Record<string, unknown> = { name: 'CI' }) {
  const response = await t.request('POST', '/v1/api-keys', { token: owner.token, body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { api_key: string; key: string; prefix: string; name: string };
}

const CREATE_KEY =
  'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { __typename ... on CreatedApiKey { id key } ... on Error { code } } }';
const REVOKE_KEY =
  'mutation ($id: ID!) { revokeApiKey(id: $id) { __typename ... on DeletedApiKey { id deleted } ... on Error { code } } }';

describe('POST /v1/api-keys', () => {
  it('answers the key once, with its id, name, prefix and times', async () => {
    const response = await t.request('POST', '/v1/api-keys', {
      token: alice.token,
      body: { name: 'Billing server' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      api_key: expect.stringMatching(/^key_[0-9a-f]{32}$/),
      name: 'Billing server',
      key: expect.stringMatching(KEY),
      prefix: response.body.key.slice(0, 16),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expires_at: null,
      last_used_at: null,
      request: response.headers.get('x-request-id'),
    });
    expect(response.body.prefix).toMatch(/^tern_live_[0-9A-Za-z]{6}$/);
  });

  it('stores only a SHA-256 of the key: the key is in no row of any table', async () => {
    const created = await createKey(alice, { name: 'Hash only' });
    const { rows } = await sql(t.database.url, 'SELECT key_hash, prefix FROM api_keys WHERE id = $1', [
      created.api_key,
    ]);
    expect(rows[0]).toEqual({
      key_hash: createHash('sha256').update(created.key).digest('base64url'),
      prefix: created.prefix,
    });

    const { rows: tables } = await sql(
      t.database.url,
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
    );
    for (const { tablename } of tables) {
      const { rows: found } = await sql(
        t.database.url,
        `SELECT count(*)::int AS n FROM "${tablename}" r WHERE to_jsonb(r)::text LIKE $1`,
        [`%${created.key.slice(10)}%`],
      );
      expect(found[0].n, tablename).toBe(0);
    }
  });

  it('refuses a bad name or expiry with 422, listing each field', async () => {
    const cases: [Record<string, unknown>, { field: string; issue: string }[]][] = [
      [{}, [{ field: 'name', issue: 'required' }]],
      [{ name: '' }, [{ field: 'name', issue: 'too_short' }]],
      [{ name: '   ' }, [{ field: 'name', issue: 'too_short' }]],
      [{ name: 'x'.repeat(81) }, [{ field: 'name', issue: 'too_long' }]],
      [{ name: 'ok', expires_at: 'tomorrow' }, [{ field: 'expires_at', issue: 'invalid_format' }]],
      [
        { name: 'ok', expires_at: new Date(Date.now() - 1000).toISOString() },
        [{ field: 'expires_at', issue: 'invalid_value' }],
      ],
      [{ name: 'ok', scopes: ['all'] }, [{ field: 'scopes', issue: 'unknown_field' }]],
    ];
    for (const [body, details] of cases) {
      const response = await t.request('POST', '/v1/api-keys', { token: bob.token, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.details, JSON.stringify(body)).toEqual(details);
    }
    expect((await t.request('GET', '/v1/api-keys', { token: bob.token })).body.total).toBe(0);
  });
});

describe('a key as the bearer credential', () => {
  it('works over /v1 for its own account, reads and writes alike', async () => {
    const { key } = await createKey(alice);
    const settings = await t.request('GET', '/v1/settings', { token: key });
    expect(settings.status).toBe(200);
    expect(settings.body.account).toBe(alice.account);

    const template = await t.request('POST', '/v1/templates', {
      token: key,
      body: { name: 'By key', content: 'Hi' },
    });
    expect(template.status).toBe(201);
    const mine = await t.request('GET', `/v1/templates/${template.body.template}`, { token: alice.token });
    expect(mine.status).toBe(200);
    expect(
      (await t.request('GET', `/v1/templates/${template.body.template}`, { token: bob.token })).status,
    ).toBe(404);

    const sent = await t.request('POST', '/v1/messages/send', {
      token: key,
      body: { to: '5511999990123', message: 'Sent with a key' },
    });
    expect(sent.status).toBe(202);
  });

  it('works over GraphQL and with the typed client', async () => {
    const { key } = await createKey(alice);
    const response = await t.graphql('{ settings { accountId } }', {}, key);
    expect(response.status).toBe(200);
    expect(response.body.data.settings.accountId).toBe(alice.account);

    const client = new TernClient({ url: `${t.url}/graphql`, token: key });
    expect((await client.request(SettingsDocument, {})).settings.account).toBe(alice.account);
    const { send_message: sent } = await client.request(SendMessageDocument, {
      input: { to: '5511999990124', message: 'Hi' },
    });
    expect(sent).toMatchObject({ status: 'queued', to: '5511999990124' });
  });

  it('cannot create or delete keys (403 forbidden), but can list them', async () => {
    const { key, api_key: id } = await createKey(alice);
    const before = await t.request('GET', '/v1/api-keys', { token: alice.token, headers: {} });

    const create = await t.request('POST', '/v1/api-keys', { token: key, body: { name: 'Minted by a key' } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual({
      error: { code: 'forbidden', message: expect.stringContaining('login token') },
      request: expect.any(String),
    });
    const remove = await t.request('DELETE', `/v1/api-keys/${id}`, { token: key });
    expect(remove.status).toBe(403);
    expect(remove.body.error.code).toBe('forbidden');

    const gqlCreate = await t.graphql(CREATE_KEY, { input: { name: 'Minted by a key' } }, key);
    expect(gqlCreate.status).toBe(403);
    expect(gqlCreate.body.errors[0].extensions.code).toBe('forbidden');
    const gqlRevoke = await t.graphql(REVOKE_KEY, { id }, key);
    expect(gqlRevoke.body.errors[0].extensions.code).toBe('forbidden');

    const client = new TernClient({ url: `${t.url}/graphql`, token: key });
    const error = await client
      .request(CreateApiKeyDocument, { input: { name: 'x' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TernClientError);
    expect((error as TernClientError).code).toBe('forbidden');

    const listed = await t.request('GET', '/v1/api-keys', { token: key });
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(before.body.total);
    expect((await t.request('GET', '/v1/settings', { token: key })).status).toBe(200);
  });

  it.each([
    ['malformed', 'tern_live_short'],
    ['never issued', `tern_live_${'A'.repeat(40)}`],
  ])('refuses a %s key with 401 unauthorized', async (_case, key) => {
    const response = await t.request('GET', '/v1/settings', { token: key });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
  });

  it("counts against the account's rate limit, with the login token, as one budget", async () => {
    const limited = await startTern({ role: 'api', env: { RATE_LIMIT_MAX: '6' }, sharing: t });
    try {
      const erin = await t.createAccount();
      // The creation is the account's first counted request of the window.
      const { key } = await createKey(erin);
      const answers = [];
      for (let i = 0; i < 6; i += 1)
        answers.push(await limited.request('GET', '/v1/settings', { token: i % 2 ? erin.token : key }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining'))).toEqual([
        '4',
        '3',
        '2',
        '1',
        '0',
        '0',
      ]);
      expect(answers[5]!.body.error.code).toBe('rate_limited');
    } finally {
      await limited.stop();
    }
  });
});

describe('expiry', () => {
  it('refuses a key from its expires_at on', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 60 * 60_000);
    const created = await createKey(alice, { name: 'One hour', expires_at: expiresAt.toISOString() });
    expect(created).toMatchObject({ expires_at: expiresAt.toISOString() });
    expect((await t.request('GET', '/v1/settings', { token: created.key })).status).toBe(200);

    t.clock.advance(60 * 60_000);
    const expired = await t.request('GET', '/v1/settings', { token: created.key });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toEqual({ code: 'unauthorized', message: 'The API key has expired' });
    const graphql = await t.graphql('{ settings { accountId } }', {}, created.key);
    expect(graphql.status).toBe(401);
    // Still listed, with its expiry, until deleted.
    const listed = await t.request('GET', '/v1/api-keys?per_page=100', { token: alice.token });
    expect(
      listed.body.data.find((key: { api_key: string }) => key.api_key === created.api_key),
    ).toMatchObject({ expires_at: expiresAt.toISOString() });
  });
});

describe('GET /v1/api-keys', () => {
  it("lists the account's keys newest first, paged, never with the key itself", async () => {
    const carol = await t.createAccount();
    const first = await createKey(carol, { name: 'first' });
    const second = await createKey(carol, { name: 'second' });
    const page = await t.request('GET', '/v1/api-keys?per_page=1', { token: carol.token });
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      data: [
        {
          api_key: second.api_key,
          name: 'second',
          prefix: second.prefix,
          created_at: expect.any(String),
          expires_at: null,
          last_used_at: null,
        },
      ],
      page: 1,
      per_page: 1,
      total: 2,
      request: expect.any(String),
    });
    const next = await t.request('GET', '/v1/api-keys?per_page=1&page=2', { token: carol.token });
    expect(next.body.data.map((key: { api_key: string }) => key.api_key)).toEqual([first.api_key]);
    expect(JSON.stringify([page.body, next.body])).not.toContain(first.key.slice(16));

    const client = new TernClient({ url: `${t.url}/graphql`, token: carol.token });
    const listed = await client.request(ApiKeysDocument, { page: 1, perPage: 10 });
    expect(listed.api_keys).toMatchObject({
      total: 2,
      data: [{ api_key: second.api_key }, { api_key: first.api_key }],
    });
  });

  it('keeps last_used_at to the minute, without a write per request', async () => {
    const carol = await t.createAccount();
    const { key, api_key: id } = await createKey(carol);
    const lastUsed = async () =>
      (await sql(t.database.url, 'SELECT last_used_at FROM api_keys WHERE id = $1', [id])).rows[0]
        .last_used_at as Date | null;
    const waitForIdlePool = async () => {
      const pool = t.tern.deps.pool;
      for (let i = 0; i < 500; i += 1) {
        if (pool.waitingCount === 0 && pool.idleCount === pool.totalCount) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the database pool never came idle');
    };
    const waitForLastUsed = async (after: Date | null) => {
      for (let i = 0; i < 50; i += 1) {
        const value = await lastUsed();
        if (value && (!after || value.getTime() > after.getTime())) return value;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('last_used_at was not written');
    };

    const usedAt = t.clock.now();
    await t.request('GET', '/v1/settings', { token: key });
    const first = await waitForLastUsed(null);
    expect(Math.abs(first.getTime() - usedAt.getTime())).toBeLessThan(5_000);

    // Within the minute: the row is not written again.
    t.clock.advance(30_000);
    await Promise.all(Array.from({ length: 5 }, () => t.request('GET', '/v1/settings', { token: key })));
    // Not "after a while": once Tern's database pool is idle, any write those requests began
    // (the write is not awaited by the request) has landed.
    await waitForIdlePool();
    expect((await lastUsed())?.getTime()).toBe(first.getTime());

    // A minute after the last write: written again.
    t.clock.advance(31_000);
    await t.request('GET', '/v1/settings', { token: key });
    const second = await waitForLastUsed(first);
    expect(second.getTime() - first.getTime()).toBeGreaterThanOrEqual(60_000);
    const listed = await t.request('GET', '/v1/api-keys', { token: carol.token });
    expect(listed.body.data[0].last_used_at).toBe(second.toISOString());
  });

  it(`holds at most ${MAX_API_KEYS_PER_ACCOUNT} keys per account, however many creations race`, async () => {
    const dave = await t.createAccount();
    const existing = MAX_API_KEYS_PER_ACCOUNT - 5;
    await sql(
      t.database.url,
      `INSERT INTO api_keys (id, account_id, name, prefix, key_hash) SELECT 'key_seed_' || n, $1, 'seed', 'tern_live_seed00', 'seed-' || n || '-' || $1 FROM generate_series(1, $2) n`,
      [dave.account, existing],
    );
    const other = await startTern({ role: 'api', sharing: t });
    try {
      const attempts = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? other : t).request('POST', '/v1/api-keys', {
            token: dave.token,
            body: { name: `race ${i}` },
          }),
        ),
      );
      const statuses = attempts.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(5);
      expect(statuses.filter((status) => status === 409)).toHaveLength(15);
      expect(attempts.find((response) => response.status === 409)!.body.error.code).toBe('conflict');
      expect((await t.request('GET', '/v1/api-keys', { token: dave.token })).body.total).toBe(
        MAX_API_KEYS_PER_ACCOUNT,
      );
    } finally {
      await other.stop();
    }
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes the key at once, over /v1 and GraphQL alike', async () => {
    const created = await createKey(alice);
    expect((await t.request('GET', '/v1/settings', { token: created.key })).status).toBe(200);
    const revoked = await t.request('DELETE', `/v1/api-keys/${created.api_key}`, { token: alice.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ api_key: created.api_key, deleted: true, request: expect.any(String) });
    const refused = await t.request('GET', '/v1/settings', { token: created.key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect(
      (await t.request('DELETE', `/v1/api-keys/${created.api_key}`, { token: alice.token })).status,
    ).toBe(404);

    const viaGraphql = await createKey(alice);
    const answer = await t.graphql(REVOKE_KEY, { id: viaGraphql.api_key }, alice.token);
    expect(answer.body.data.revokeApiKey).toEqual({
      __typename: 'DeletedApiKey',
      id: viaGraphql.api_key,
      deleted: true,
    });
    expect((await t.graphql('{ settings { accountId } }', {}, viaGraphql.key)).status).toBe(401);
  });

  it("is 404 for another account's key, which keeps working", async () => {
    const created = await createKey(alice);
    const response = await t.request('DELETE', `/v1/api-keys/${created.api_key}`, { token: bob.token });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
    expect((await t.request('GET', '/v1/settings', { token: created.key })).status).toBe(200);
  });
});
