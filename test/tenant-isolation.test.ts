import { isNonNullType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperationRegistry } from '../src/rest/operations.js';
import { type RestRoute, routes } from '../src/rest/route-table.js';
import { sql } from './support/database.js';
import {
  argumentPaths,
  getAt,
  leafPaths,
  type RootField,
  rootFieldDocument,
  rootFields,
  setAt,
  uploadArgument,
} from './support/graphql-fields.js';
import {
  type HttpResult,
  pauseSettingsPolls,
  startTern,
  type TestAccount,
  type TestTern,
} from './support/tern.js';
import { waitFor } from './support/wait.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Account B against account A's ids, on every /v1 route with an id in its path and every
 * GraphQL field that takes an id (as an argument or inside an input). Both lists are derived
 * from the route table and the schema, so a new route or field without a case fails here.
 */

/** The ids an account owns, by the name the routes give their path parameters. */
interface Owned {
  campaign: string;
  contact: string;
  job: string;
  message: string;
  template: string;
  webhook: string;
  event: string;
  apikey: string;
  verification: string;
  /** Not an id: the number that opted out of the account (each account's own). */
  optedOut: string;
}

interface Tenant extends TestAccount {
  ids: Owned;
}

const CSV = 'phone\n5511999990103\n';
const CSRF = { 'x-tern-csrf': '1' };

let t: TestTern;
let receiver: WebhookReceiver;
let alice: Tenant;
let bob: Tenant;
let registry: OperationRegistry;

beforeAll(async () => {
  [t, receiver] = await Promise.all([
    startTern({
      env: {
        SIMULATOR_DELAY_MS: '20',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_ALLOW_INSECURE: 'true',
      },
    }),
    WebhookReceiver.start(),
  ]);
  registry = OperationRegistry.fromDirectory(t.schema);
  const [a, b] = await Promise.all([t.createAccount(), t.createAccount()]);
  [alice, bob] = await Promise.all([seed(a, '/alice', '5511999990301'), seed(b, '/bob', '5511999990302')]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), receiver?.close()]);
});

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: account.token, ...(body === undefined ? {} : { body }) });

async function created(response: Promise<HttpResult>, key: string): Promise<string> {
  const { status, body } = await response;
  expect(status, JSON.stringify(body)).toBeLessThan(300);
  return body[key];
}

async function multipart(
  account: TestAccount,
  path: string,
  form: FormData,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, ...headers },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

function importForm(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([CSV]), 'contacts.csv');
  return form;
}

/** One of everything, through the API, then waits until the workers are done with it all. */
async function seed(account: TestAccount, hookPath: string, optedOut: string): Promise<Tenant> {
  const template = await created(
    api(account, 'POST', '/v1/templates', { name: 'Greeting', content: 'Hi {{name}}' }),
    'template',
  );
  const campaign = await created(
    api(account, 'POST', '/v1/campaigns', { name: 'Spring', template }),
    'campaign',
  );
  const contact = await created(
    api(account, 'POST', `/v1/campaigns/${campaign}/contacts`, { phone: '5511999990101', name: 'Ana' }),
    'contact',
  );
  const webhook = await created(
    api(account, 'POST', '/v1/webhooks', {
      url: `${receiver.url}${hookPath}`,
      events: ['message.delivered'],
    }),
    'webhook',
  );
  const message = await created(
    api(account, 'POST', '/v1/messages/send', { to: '5511999990102', message: 'Hello', campaign }),
    'message',
  );
  const job = await created(
    multipart(account, `/v1/campaigns/${campaign}/contacts/import`, importForm({ phone_column: 'phone' })),
    'job',
  );
  const apikey = await created(api(account, 'POST', '/v1/api-keys', { name: 'Integration' }), 'api_key');
  const verification = await created(
    api(account, 'POST', '/v1/verifications', { to: '5511999990103' }),
    'verification',
  );
  // Its code's message settles before the snapshots are taken.
  await waitFor(async () => {
    const read = await api(account, 'GET', `/v1/verifications/${verification}`);
    const sent = await api(account, 'GET', `/v1/messages/${read.body.message}`);
    return sent.body.status === 'delivered' ? true : null;
  });
  // The number answers STOP (as through any carrier): an opt-out of this account's.
  await created(
    api(account, 'POST', '/v1/messages/send', { to: optedOut, message: 'Reply STOP to stop' }),
    'message',
  );
  await t.tern.services.carrierReports.recordInbound('simulator', {
    carrierMessageId: `stop-${optedOut}`,
    from: optedOut,
    to: null,
    text: 'STOP',
    at: new Date(),
  });
  const event = await waitFor(async () => {
    const { rows } = await sql(
      t.database.url,
      `SELECT id FROM events WHERE account_id = $1 AND type = 'message.delivered'`,
      [account.account],
    );
    return rows[0]?.id as string | undefined;
  });
  await waitFor(async () =>
    (await api(account, 'GET', `/v1/campaigns/${campaign}/contacts/import/${job}`)).body.status ===
    'completed'
      ? true
      : null,
  );
  await waitFor(async () => {
    const { rows } = await sql(
      t.database.url,
      `SELECT (SELECT count(*) FROM pending_webhook_deliveries WHERE account_id = $1)::int AS pending,
              (SELECT count(*) FROM events WHERE account_id = $1 AND dispatched_at IS NULL)::int AS undispatched,
              (SELECT count(*) FROM webhook_deliveries WHERE account_id = $1 AND status_code = 200)::int AS done`,
      [account.account],
    );
    return rows[0].pending === 0 && rows[0].undispatched === 0 && rows[0].done >= 1 ? true : null;
  });
  return {
    ...account,
    ids: { campaign, contact, job, message, template, webhook, event, apikey, verification, optedOut },
  };
}

/** Every row of every table that has an account_id, for one account. */
async function snapshot(account: string): Promise<Record<string, unknown[]>> {
  const { rows: tables } = await sql(
    t.database.url,
    `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'account_id' ORDER BY table_name`,
  );
  const result: Record<string, unknown[]> = {};
  for (const { table_name: table } of tables) {
    result[table] = (
      await sql(
        t.database.url,
        `SELECT to_jsonb(r) AS row FROM "${table}" r WHERE account_id = $1 ORDER BY to_jsonb(r)::text`,
        [account],
      )
    ).rows;
  }
  result.accounts = (
    await sql(t.database.url, `SELECT to_jsonb(a) AS row FROM accounts a WHERE id = $1`, [account])
  ).rows;
  return result;
}

function idsOf(tenant: Tenant): string[] {
  return [tenant.account, ...Object.values(tenant.ids)];
}

function expectNoneOf(owner: Tenant, value: unknown, label: string) {
  const text = JSON.stringify(value);
  for (const id of idsOf(owner)) expect(text.includes(id), `${label} reveals ${id}`).toBe(false);
}

const key = (route: RestRoute) => `${route.method} ${route.path}`;
const pathParams = (route: RestRoute) => [...route.path.matchAll(/:([a-z]+)/g)].map((match) => match[1]!);

function fill(route: RestRoute, idFor: (param: string, index: number) => string): string {
  let index = 0;
  return route.path.replace(/:([a-z]+)/g, (_, param: string) => {
    const id = idFor(param, index++);
    expect(id, `${key(route)}: no id for :${param}`).toBeDefined();
    return id;
  });
}

function ownedId(tenant: Tenant, param: string): string {
  return (tenant.ids as unknown as Record<string, string>)[param]!;
}

/** A body each route with a body accepts, so a refusal can only be about ownership. */
const VALID_BODIES: Record<string, (owner: Tenant) => Record<string, unknown>> = {
  'POST /v1/auth/login': () => ({ email: 'nobody@example.com', password: 'wrong password' }),
  'PATCH /v1/settings': () => ({ timezone: 'Europe/Lisbon' }),
  'POST /v1/messages/send': (owner) => ({ to: '5511999990188', message: 'Hi', campaign: owner.ids.campaign }),
  'POST /v1/messages': (owner) => ({ to: '5511999990188', message: 'Hi', campaign: owner.ids.campaign }),
  'POST /v1/messages/preview': () => ({ message: 'Hi' }),
  'POST /v1/campaigns': (owner) => ({ name: 'Taken', template: owner.ids.template }),
  'PATCH /v1/campaigns/:campaign': (owner) => ({ name: 'Taken over', template: owner.ids.template }),
  'POST /v1/campaigns/:campaign/contacts': () => ({ phone: '5511999990199' }),
  'POST /v1/campaigns/:campaign/contacts/import': () => ({ phone_column: 'phone' }),
  'POST /v1/templates': () => ({ name: 'Stolen', content: 'x' }),
  'PATCH /v1/templates/:template': () => ({ content: 'Changed' }),
  'POST /v1/webhooks': () => ({ url: `${receiver.url}/stolen`, events: ['message.failed'] }),
  'PATCH /v1/webhooks/:webhook': () => ({ events: ['message.failed'] }),
  'POST /v1/webhooks/:webhook/replay': (owner) => ({ event: owner.ids.event }),
  'POST /v1/verifications': (owner) => ({ to: '5511999990166', template: owner.ids.template }),
  'POST /v1/verifications/:verification/check': () => ({ code: '123456' }),
};

const isId = (name: string) => name === 'ID';

/** Input fields of ID type inside a route's body, as dotted snake_case paths. */
function bodyIdFields(route: RestRoute): string[] {
  if (!route.body) return [];
  const type = registry.get(route.operation).variableTypes.get(route.body);
  return type
    ? leafPaths(type, isId).map((path) =>
        path.map((part) => part.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).join('.'),
      )
    : [];
}

function sendRoute(
  route: RestRoute,
  caller: Tenant,
  path: string,
  body?: Record<string, unknown>,
): Promise<HttpResult> {
  if (route.upload) {
    const form = new FormData();
    for (const [name, value] of Object.entries(body ?? {})) form.append(name, String(value));
    form.append(route.upload.field, new Blob([CSV]), 'contacts.csv');
    return multipart(caller, path, form);
  }
  return api(caller, route.method, path, body);
}

function expectNotFound(response: HttpResult, label: string, field?: string) {
  const acceptable =
    (response.status === 404 && response.body?.error?.code === 'not_found') ||
    (field !== undefined &&
      response.status === 422 &&
      response.body?.error?.details?.some(
        (detail: { field: string; issue: string }) => detail.field === field && detail.issue === 'not_found',
      ));
  expect(acceptable, `${label}: ${response.status} ${JSON.stringify(response.body)}`).toBe(true);
}

describe('the /v1 layer', () => {
  let before: Record<string, unknown[]>;
  let bobBefore: Record<string, unknown[]>;
  beforeAll(async () => {
    [before, bobBefore] = await Promise.all([snapshot(alice.account), snapshot(bob.account)]);
  });

  it('has a valid body for every route that takes an id and a body', () => {
    const missing = routes.filter(
      (route) =>
        route.body &&
        (pathParams(route).length > 0 || bodyIdFields(route).length > 0) &&
        !VALID_BODIES[key(route)],
    );
    expect(missing.map(key)).toEqual([]);
  });

  it('answers 404 not_found to another account on every route with an id in its path', async () => {
    const withIds = routes.filter((route) => pathParams(route).length > 0);
    expect(withIds.length).toBeGreaterThan(20);
    for (const route of withIds) {
      const body = VALID_BODIES[key(route)]?.(bob);
      expectNotFound(
        await sendRoute(
          route,
          bob,
          fill(route, (param) => ownedId(alice, param)),
          body,
        ),
        `${key(route)} with A's ids`,
      );
      // A path under one of B's own parents does not reach A's child either.
      for (let mine = 0; mine < pathParams(route).length - 1; mine += 1) {
        const path = fill(route, (param, index) => ownedId(index <= mine ? bob : alice, param));
        expectNotFound(await sendRoute(route, bob, path, body), `${key(route)} at ${path}`);
      }
    }
  });

  it("refuses another account's id inside a body, on B's own objects", async () => {
    const cases = routes.flatMap((route) => bodyIdFields(route).map((field) => ({ route, field })));
    expect(cases.map(({ route, field }) => `${key(route)} ${field}`)).toEqual(
      expect.arrayContaining([
        'POST /v1/messages/send campaign',
        'POST /v1/campaigns template',
        'POST /v1/webhooks/:webhook/replay event',
      ]),
    );
    for (const { route, field } of cases) {
      const body = {
        ...VALID_BODIES[key(route)]!(bob),
        [field]: (VALID_BODIES[key(route)]!(alice) as Record<string, unknown>)[field],
      };
      expectNotFound(
        await sendRoute(
          route,
          bob,
          fill(route, (param) => ownedId(bob, param)),
          body,
        ),
        `${key(route)} with A's ${field}`,
        field,
      );
    }
  });

  it("never lists or shows another account's rows, whatever the filter", async () => {
    for (const route of routes.filter((r) => r.method === 'GET')) {
      const path = fill(route, (param) => ownedId(bob, param));
      const own = await api(bob, 'GET', path);
      expect(own.status, `${key(route)} for B's own ids`).toBe(200);
      expectNoneOf(alice, own.body, key(route));
      for (const name of Object.keys(route.query ?? {}).filter((name) => name in alice.ids)) {
        const filtered = await api(bob, 'GET', `${path}?${name}=${ownedId(alice, name)}`);
        expect(filtered.status, `${key(route)}?${name}=A's`).toBeLessThan(500);
        expectNoneOf(alice, filtered.body, `${key(route)}?${name}=A's`);
      }
    }
    const lists = await Promise.all(
      ['/v1/campaigns', '/v1/messages', '/v1/templates', '/v1/webhooks'].map((path) => api(bob, 'GET', path)),
    );
    for (const list of lists) expect(list.body.total).toBeGreaterThan(0);
  });

  it('changed nothing of either account, and A still reads all of it', async () => {
    expect(await snapshot(alice.account)).toEqual(before);
    expect(await snapshot(bob.account)).toEqual(bobBefore);
    for (const route of routes.filter((r) => r.method === 'GET' && pathParams(r).length > 0)) {
      expect(
        (
          await api(
            alice,
            'GET',
            fill(route, (param) => ownedId(alice, param)),
          )
        ).status,
        key(route),
      ).toBe(200);
    }
  });
});

/** Variables for each GraphQL field that takes an id, every id taken from `owner`. */
const GRAPHQL_VARIABLES: Record<string, (owner: Tenant) => Record<string, unknown>> = {
  'Query.campaign': ({ ids }) => ({ id: ids.campaign }),
  'Query.contact': ({ ids }) => ({ campaign: ids.campaign, id: ids.contact }),
  'Query.contacts': ({ ids }) => ({ campaign: ids.campaign }),
  'Query.importJob': ({ ids }) => ({ campaign: ids.campaign, id: ids.job }),
  'Query.message': ({ ids }) => ({ id: ids.message }),
  'Mutation.cancelMessage': ({ ids }) => ({ id: ids.message }),
  'Query.messages': ({ ids }) => ({ campaign: ids.campaign }),
  'Query.messageStats': ({ ids }) => ({ campaign: ids.campaign }),
  'Query.deliveryTimes': ({ ids }) => ({ campaign: ids.campaign }),
  'Query.template': ({ ids }) => ({ id: ids.template }),
  'Query.verification': ({ ids }) => ({ id: ids.verification }),
  'Mutation.checkVerification': ({ ids }) => ({ id: ids.verification, input: { code: '123456' } }),
  'Mutation.startVerification': ({ ids }) => ({ input: { to: '5511999990166', template: ids.template } }),
  'Query.webhook': ({ ids }) => ({ id: ids.webhook }),
  'Query.webhookDeliveries': ({ ids }) => ({ webhook: ids.webhook }),
  'Mutation.addContact': ({ ids }) => ({ campaign: ids.campaign, input: { phone: '5511999990177' } }),
  'Mutation.cancelCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.pauseCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.resumeCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.scheduleCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.startCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.unscheduleCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.deleteCampaign': ({ ids }) => ({ id: ids.campaign }),
  'Mutation.createCampaign': ({ ids }) => ({ input: { name: 'Taken', template: ids.template } }),
  'Mutation.updateCampaign': ({ ids }) => ({
    id: ids.campaign,
    input: { name: 'Taken over', template: ids.template },
  }),
  'Mutation.deleteTemplate': ({ ids }) => ({ id: ids.template }),
  'Mutation.updateTemplate': ({ ids }) => ({ id: ids.template, input: { content: 'Changed' } }),
  'Mutation.deleteWebhook': ({ ids }) => ({ id: ids.webhook }),
  'Mutation.updateWebhook': ({ ids }) => ({ id: ids.webhook, input: { events: ['message_failed'] } }),
  'Mutation.replayWebhook': ({ ids }) => ({ id: ids.webhook, input: { event: ids.event } }),
  'Mutation.importContacts': ({ ids }) => ({
    campaign: ids.campaign,
    file: null,
    input: { phoneColumn: 'phone' },
  }),
  'Mutation.sendMessage': ({ ids }) => ({
    input: { to: '5511999990188', message: 'Hi', campaign: ids.campaign },
  }),
  'Mutation.revokeApiKey': ({ ids }) => ({ id: ids.apikey }),
};

interface FieldCase extends RootField {
  /** Every place an id goes: an argument, or a path into an input argument. */
  idPaths: string[][];
}

function fieldCases(): FieldCase[] {
  return rootFields(t.schema)
    .map((root) => ({ ...root, idPaths: argumentPaths(root.field, isId) }))
    .filter((fieldCase) => fieldCase.idPaths.length > 0);
}

async function runField(
  fieldCase: FieldCase,
  caller: Tenant,
  variables: Record<string, unknown>,
): Promise<any> {
  const document = rootFieldDocument(fieldCase, variables);
  const upload = uploadArgument(fieldCase);
  let response: HttpResult;
  if (upload) {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: document, variables }));
    form.append('map', JSON.stringify({ 0: [`variables.${upload}`] }));
    form.append('0', new Blob([CSV]), 'contacts.csv');
    response = await multipart(caller, '/graphql', form, CSRF);
  } else {
    response = await t.graphql(document, variables, caller.token);
  }
  expect(response.body.errors, `${fieldCase.name}: ${JSON.stringify(response.body.errors)}`).toBeUndefined();
  return response.body.data.result;
}

/** Refused as not found: the typed NotFoundError, a ValidationError naming the id, or an empty page. */
function expectRefused(result: any, label: string, idField: string) {
  const refused =
    (result?.__typename === 'NotFoundError' && result.code === 'not_found') ||
    (result?.__typename === 'ValidationError' &&
      result.details.some(
        (detail: { field: string; issue: string }) =>
          detail.field === idField && detail.issue === 'not_found',
      )) ||
    (typeof result?.total === 'number' && result.total === 0);
  expect(refused, `${label}: ${JSON.stringify(result)}`).toBe(true);
  expectNoneOf(alice, result, label);
}

describe('the GraphQL schema', () => {
  let before: Record<string, unknown[]>;
  let bobBefore: Record<string, unknown[]>;
  beforeAll(async () => {
    [before, bobBefore] = await Promise.all([snapshot(alice.account), snapshot(bob.account)]);
  });

  it('has a case for every query and mutation that takes an id, anywhere in its arguments', () => {
    const names = fieldCases().map((fieldCase) => fieldCase.name);
    expect(names.filter((name) => !GRAPHQL_VARIABLES[name])).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining(['Query.campaign', 'Mutation.sendMessage', 'Mutation.importContacts']),
    );
  });

  it('gives another account NotFound for every id, alone or among its own', async () => {
    for (const fieldCase of fieldCases()) {
      const theirs = GRAPHQL_VARIABLES[fieldCase.name]!(alice);
      const mine = GRAPHQL_VARIABLES[fieldCase.name]!(bob);
      const lastField = (path: string[]) => path.slice(1).join('.') || path[0]!;
      expectRefused(
        await runField(fieldCase, bob, theirs),
        `${fieldCase.name} with A's ids`,
        lastField(fieldCase.idPaths[0]!),
      );
      for (const path of fieldCase.idPaths) {
        const variables = setAt(mine, path, getAt(theirs, path));
        expectRefused(
          await runField(fieldCase, bob, variables),
          `${fieldCase.name} with A's ${path.join('.')}`,
          lastField(path),
        );
      }
      if (fieldCase.operation === 'query') {
        const own = await runField(fieldCase, bob, mine);
        expect(own.__typename, `${fieldCase.name} with B's own ids`).not.toMatch(/Error$/);
      }
    }
  });

  it("never lists another account's rows in a query that takes no id", async () => {
    const lists = rootFields(t.schema).filter(
      (root) => root.operation === 'query' && root.field.args.every((arg) => !isNonNullType(arg.type)),
    );
    expect(lists.map((root) => root.name)).toEqual(
      expect.arrayContaining(['Query.campaigns', 'Query.messages', 'Query.templates', 'Query.webhooks']),
    );
    for (const root of lists) {
      const response = await t.graphql(rootFieldDocument(root, {}), {}, bob.token);
      expect(response.body.errors, root.name).toBeUndefined();
      expectNoneOf(alice, response.body.data, root.name);
      if (typeof response.body.data.result.total === 'number') {
        expect(response.body.data.result.nodes.length, `${root.name} lists B's own rows`).toBeGreaterThan(0);
      }
    }
  });

  it('changed nothing of either account', async () => {
    expect(await snapshot(alice.account)).toEqual(before);
    expect(await snapshot(bob.account)).toEqual(bobBefore);
  });
});

describe('a list of campaigns with their stats and template', () => {
  it('takes the same number of SQL statements for 2 campaigns as for 12', async () => {
    // An API process of its own on the same database, its settings polls paused: its pool serves
    // only the requests below.
    const api = await startTern({ role: 'api', sharing: t });
    try {
      const carol = await t.createAccount();
      const template = await created(
        t.request('POST', '/v1/templates', { token: carol.token, body: { name: 'Counted', content: 'Hi' } }),
        'template',
      );
      const createCampaigns = async (n: number) => {
        for (let i = 0; i < n; i += 1) {
          const campaign = await created(
            t.request('POST', '/v1/campaigns', { token: carol.token, body: { name: `C${i}`, template } }),
            'campaign',
          );
          await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
            token: carol.token,
            body: { phone: `55119999902${10 + i}` },
          });
        }
      };
      pauseSettingsPolls(api);
      let statements = 0;
      api.tern.deps.pool.on('acquire', () => {
        statements += 1;
      });
      const list = async () => {
        statements = 0;
        const response = await api.graphql(
          '{ campaigns(perPage: 100) { ... on CampaignPage { total nodes { id stats { contacts queued sent delivered failed replied } template { id name } } } } }',
          {},
          carol.token,
        );
        expect(response.body.errors).toBeUndefined();
        return { count: statements, campaigns: response.body.data.campaigns.nodes.length };
      };
      await createCampaigns(2);
      const few = await list();
      await createCampaigns(10);
      const many = await list();
      expect([few.campaigns, many.campaigns]).toEqual([2, 12]);
      expect(few.count).toBeGreaterThan(0);
      expect(many.count).toBe(few.count);
    } finally {
      await api.stop();
    }
  });
});
