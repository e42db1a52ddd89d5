import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RestRoute, routes } from '../src/rest/route-table.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

/**
 * The route table's flags `public` and `loginTokenOnly` state what the domain enforces (and give
 * the OpenAPI document its 401 and 403 answers), and the document's 429 `quota_exceeded` comes from
 * the failures each route's GraphQL field declares: each is held here against what every route of
 * the table answers.
 */

let t: TestTern;
let account: TestAccount;
let apiKey: string;

beforeAll(async () => {
  t = await startTern({ role: 'api' });
  account = await t.createAccount();
  const created = await t.request('POST', '/v1/api-keys', { token: account.token, body: { name: 'flags' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  apiKey = created.body.key as string;
});

afterAll(async () => {
  await t?.stop();
});

/** The route's path with an id of nothing in each parameter. */
function pathOf(route: RestRoute): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => `${name}_000000000000000000000000`);
}

/** Each route with ids of nothing and the body given (an empty one by default): what it answers. */
async function answers(token: string | undefined, body: Record<string, unknown> = {}) {
  const answered: { route: string; status: number; code: unknown }[] = [];
  for (const route of routes) {
    const response = await t.request(route.method, pathOf(route), {
      ...(token ? { token } : {}),
      ...(route.body && !route.upload ? { body } : {}),
    });
    answered.push({
      route: `${route.method} ${route.path}`,
      status: response.status,
      code: response.body?.error?.code,
    });
  }
  return answered;
}

const named = (route: RestRoute) => `${route.method} ${route.path}`;

describe('the route flags', () => {
  it('public: a route flagged public answers without credentials, every other route answers 401', async () => {
    const answered = await answers(undefined);
    for (const route of routes) {
      const answer = answered.find((entry) => entry.route === named(route))!;
      if (route.public) expect(answer.status, answer.route).not.toBe(401);
      else expect(answer, answer.route).toMatchObject({ status: 401, code: 'unauthorized' });
    }
  });

  it('loginTokenOnly: a flagged route refuses an API key with 403, every other route accepts one', async () => {
    const answered = await answers(apiKey);
    for (const route of routes) {
      const answer = answered.find((entry) => entry.route === named(route))!;
      if (route.loginTokenOnly)
        expect(answer, answer.route).toMatchObject({ status: 403, code: 'forbidden' });
      else expect([401, 403], answer.route).not.toContain(answer.status);
    }
    expect(routes.some((route) => route.loginTokenOnly)).toBe(true);
  });

  it('quota_exceeded: a route the document says can spend the quota answers it past the quota, no other route ever does', async () => {
    await t.tern.services.accountQuotas.setLimits(account.account, { dailySegments: 1 });
    const first = await t.request('POST', '/v1/messages/send', {
      token: account.token,
      body: { to: '5511999990101', message: 'Hello' },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(202);

    const document = (await t.request('GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    };
    const documented = (route: RestRoute) =>
      document.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
    for (const route of routes) expect(documented(route), named(route)).toBeDefined();
    const spending = routes.filter((route) =>
      documented(route)?.responses['429']?.description?.includes('`quota_exceeded`'),
    );
    expect(spending.length).toBeGreaterThan(0);
    for (const route of spending) {
      const response = await t.request(route.method, pathOf(route), {
        token: account.token,
        // A verification's text is its own: it takes the number alone.
        body:
          route.path === '/v1/verifications'
            ? { to: '5511999990102' }
            : { to: '5511999990102', message: 'Hello again' },
      });
      expect({ status: response.status, code: response.body?.error?.code }, named(route)).toEqual({
        status: 429,
        code: 'quota_exceeded',
      });
    }
    // Every other route, given the very body a send past the quota is refused for.
    for (const answer of await answers(account.token, { to: '5511999990102', message: 'Hello again' }))
      if (!spending.some((route) => named(route) === answer.route))
        expect(answer.code, answer.route).not.toBe('quota_exceeded');

    // A campaign's messages spend the quota as its batches go (a batch without room pauses it):
    // starting one, with the quota spent, is answered as any start.
    const post = async (path: string, body?: unknown) =>
      t.request('POST', path, { token: account.token, ...(body === undefined ? {} : { body }) });
    const template = (await post('/v1/templates', { name: 'Flags', content: 'Hi {{name}}' })).body.template;
    const campaign = (await post('/v1/campaigns', { name: 'Flags', template })).body.campaign;
    expect((await post(`/v1/campaigns/${campaign}/contacts`, { phone: '5511999990103' })).status).toBe(201);
    const started = await post(`/v1/campaigns/${campaign}/start`);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
  });
});
