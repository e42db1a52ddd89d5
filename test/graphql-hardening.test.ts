import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from './support/database.js';
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
      t.request('POST', '/graphql', {
        token: alice.token,
        body: Array.from({ length: n }, () => ({ query: '{ settings { timezone } }' })),
      });
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
  const settingsByGet = `/graphql?query=${encodeURIComponent('{ settings { timezone } }')}`;

  it('refuses a GET query that a page on another site could make, with what a browser attaches by itself', async () => {
    const attached: Record<string, string>[] = [{}, { authorization: 'Basic dXNlcjpwYXNzd29yZA==' }];
    for (const headers of attached) {
      const response = await fetch(`${t.url}${settingsByGet}`, { headers });
      expect(response.status).toBe(403);
      expect(JSON.stringify(await response.json())).toContain('X-Tern-CSRF');
    }
  });

  it('takes the same GET with the header a page cannot set cross-site', async () => {
    const response = await fetch(`${t.url}${settingsByGet}`, {
      headers: { authorization: `Bearer ${alice.token}`, 'x-tern-csrf': '1' },
    });
    expect(response.status).toBe(200);
  });

  it('takes the same GET with a bearer credential alone, which a page cannot set cross-site either', async () => {
    const response = await fetch(`${t.url}${settingsByGet}`, {
      headers: { authorization: `Bearer ${alice.token}` },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).data.settings.timezone).toBeTypeOf('string');
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

describe('errors in production', () => {
  let production: TestTern;
  let account: TestAccount;
  beforeAll(async () => {
    production = await startTern({
      env: { NODE_ENV: 'production', WEBHOOK_SECRET_KEY: 'ab'.repeat(32), RATE_LIMIT_MAX: '1000' },
    });
    account = await production.createAccount();
  });
  afterAll(() => production.stop());

  /** Each entry has its message and extensions { code, request } (and details for a validation error), nothing else. */
  function expectMasked(response: { headers: Headers; body: any }, code: string) {
    const request = response.headers.get('x-request-id');
    expect(response.body.errors.length).toBeGreaterThan(0);
    for (const error of response.body.errors) {
      expect(Object.keys(error).sort()).toEqual(['extensions', 'message']);
      expect(
        Object.keys(error.extensions)
          .filter((name) => name !== 'details')
          .sort(),
      ).toEqual(['code', 'request']);
      expect(error.extensions).toMatchObject({ code, request });
    }
    expect(response.body.extensions.request).toBe(request);
    expect(JSON.stringify(response.body)).not.toMatch(/locations|"path"|stack|prisma|relation|templates/i);
  }

  it('keep only the message, the code and the request id of a resolver error', async () => {
    expectMasked(await production.graphql('{ settings { timezone } }', {}, 'not-a-token'), 'unauthorized');
  });

  it('do so for a document that does not validate', async () => {
    const response = await production.graphql('{ settings { nope } }', {}, account.token);
    expectMasked(response, 'GRAPHQL_VALIDATION_FAILED');
  });

  it('never suggest a name of the schema, whatever was misspelt', async () => {
    const misspelt = [
      ['a field', '{ settings { timezon } }', {}],
      ['an argument', '{ messages(perPag: 5) { __typename } }', {}],
      ['a type', 'query ($p: Strin) { settings { timezone } }', {}],
      [
        'an input field',
        'mutation { sendMessage(input: { too: "5511999990001", message: "Hi" }) { __typename } }',
        {},
      ],
      ['an enum value', '{ messages(status: sen) { __typename } }', {}],
      [
        'an enum value in a variable',
        'query ($status: MessageStatus) { messages(status: $status) { __typename } }',
        { status: 'sen' },
      ],
    ] as const;
    for (const [what, query, variables] of misspelt) {
      const response = await production.graphql(query, variables, account.token);
      expect(response.body.errors?.length, what).toBeGreaterThan(0);
      expect(JSON.stringify(response.body), what).not.toMatch(
        /did you mean|timezone"|perPage|"String"|"to"|"sent"/i,
      );
      // Outside production the suggestion stays: it is what a developer needs.
      const developer = await t.graphql(query, variables, alice.token);
      expect(JSON.stringify(developer.body), what).toMatch(/Did you mean/);
    }
  });

  it('do so for a refused variable, with its details', async () => {
    const response = await production.graphql(
      'mutation ($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }',
      { input: { to: '5511999990001', message: 'a\u0000b' } },
      account.token,
    );
    expectMasked(response, 'validation_error');
    expect(response.body.errors[0].extensions.details).toEqual([
      { field: 'input.message', issue: 'invalid_value' },
    ]);
  });

  it('do so for a refused cross-site request and an over-long batch', async () => {
    const response = await fetch(
      `${production.url}/graphql?query=${encodeURIComponent('{ settings { timezone } }')}`,
    );
    expect(response.status).toBe(403);
    expectMasked({ headers: response.headers, body: await response.json() }, 'bad_request');
    const batch = await production.request('POST', '/graphql', {
      token: account.token,
      body: Array.from({ length: 11 }, () => ({ query: '{ settings { timezone } }' })),
    });
    expect(batch.status).toBe(413);
    expectMasked(batch, 'BAD_REQUEST');
  });

  it('say nothing of a failure inside the server but internal_error and the request id', async () => {
    // A real failure of the database under a running resolver: the table is gone.
    await sql(production.database.url, 'DROP TABLE templates CASCADE');
    const response = await production.graphql(
      '{ templates { ... on TemplatePage { total } } }',
      {},
      account.token,
    );
    expectMasked(response, 'internal_error');
    expect(response.body.errors[0].message).toBe(
      'An unexpected error occurred; quote the request id when reporting it',
    );
  });
});
