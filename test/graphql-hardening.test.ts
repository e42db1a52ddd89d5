import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

describe('limits on a GraphQL document', () => {
  it('refuses more than 30 aliases', async () => {
    const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: settings { timezone }`).join(' ');
    const response = await t.graphql(`{ ${aliases} }`, {}, alice.token);
    expect(response.body.errors?.[0]?.message ?? '').toMatch(/alias/i);
  });

  it('takes up to 10 operations in one batch and refuses more', async () => {
    const batch = (n: number) =>
      t.request('POST', '/graphql', { token: alice.token, body: Array.from({ length: n }, () => ({ query: '{ settings { timezone } }' })) });
    const ten = await batch(10);
    expect(ten.status).toBe(200);
    expect(ten.body).toHaveLength(10);
    expect(ten.body.every((result: { data: unknown }) => result.data)).toBe(true);
    const eleven = await batch(11);
    expect(eleven.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(eleven.body)).toMatch(/batch/i);
  });
});

describe('cross-site request forgery', () => {
  it('refuses a GET query that a page on another site could make', async () => {
    const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ settings { timezone } }')}`, {
      headers: { authorization: `Bearer ${alice.token}` },
    });
    expect(response.status).toBe(403);
  });

  it('takes the same GET with the header a page cannot set cross-site', async () => {
    const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ settings { timezone } }')}`, {
      headers: { authorization: `Bearer ${alice.token}`, 'x-tern-csrf': '1' },
    });
    expect(response.status).toBe(200);
  });
});

describe('production settings', () => {
  it('turn off introspection and GraphiQL', async () => {
    const locked = await startTern({ env: { GRAPHQL_INTROSPECTION: 'false', GRAPHIQL: 'false' } });
    try {
      const account = await locked.createAccount();
      const introspection = await locked.graphql('{ __schema { types { name } } }', {}, account.token);
      expect(introspection.body.errors?.[0]?.message ?? '').toMatch(/introspection/i);
      const page = await fetch(`${locked.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(await page.text()).not.toContain('Tern GraphQL console');
    } finally {
      await locked.stop();
    }
  });
});
