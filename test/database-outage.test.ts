import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.js';
import { DatabaseRelay } from './support/database-relay.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

// PostgreSQL goes away under a running Tern: requests that need it are answered 503
// service_unavailable with Retry-After (the client should come back), never 500 internal_error,
// over /v1 and GraphQL; once it is back, the same requests succeed.

let t: TestTern;
let alice: TestAccount;
let relay: DatabaseRelay;

beforeAll(async () => {
  const database = await createTestDatabase();
  const url = new URL(database.url);
  relay = new DatabaseRelay(url.hostname, Number(url.port || 5432));
  await relay.open();
  url.host = `127.0.0.1:${relay.port}`;
  t = await startTern({ role: 'api', env: { DATABASE_URL: url.toString() } });
  alice = await t.createAccount();
});
afterAll(async () => {
  // Open, so that Tern stops as it would with PostgreSQL there (the test may have failed while it was cut).
  await relay.open(relay.port);
  await t.stop();
  await relay.cut();
});

describe('PostgreSQL unreachable', () => {
  it('answers 503 service_unavailable with Retry-After over /v1 and GraphQL, and serves again when it is back', async () => {
    await relay.cut();
    const send = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '5511999990001', message: 'hi' },
    });
    expect(send.status, JSON.stringify(send.body)).toBe(503);
    expect(send.body.error.code).toBe('service_unavailable');
    expect(send.headers.get('retry-after')).toMatch(/^\d+$/);

    const list = await t.request('GET', '/v1/messages', { token: alice.token });
    expect(list.status, JSON.stringify(list.body)).toBe(503);

    const graphql = await t.graphql('{ settings { timezone } }', {}, alice.token);
    expect(graphql.status, JSON.stringify(graphql.body)).toBe(503);
    expect(graphql.body.errors[0].extensions.code).toBe('service_unavailable');

    const login = await t.request('POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    expect(login.status, JSON.stringify(login.body)).toBe(503);

    await relay.open(relay.port);
    const back = await t.request('GET', '/v1/messages', { token: alice.token });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
  }, 60_000);
});
