import { randomBytes } from 'node:crypto';
import {
  astFromValue,
  coerceInputValue,
  type GraphQLInputType,
  getNamedType,
  isInputObjectType,
  isListType,
  isNonNullType,
  print,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { OperationRegistry } from '../src/rest/operations.js';
import { type RestRoute, routes } from '../src/rest/route-table.js';
import { sql } from './support/database.js';
import {
  argumentPaths,
  type RootField,
  resultSelection,
  rootFieldDocument,
  rootFields,
  setAt,
  uploadArgument,
} from './support/graphql-fields.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Malformed and hostile input on every /v1 route and every GraphQL root field (both lists
 * derived from the route table and the schema): each answer is a 4xx with one of Tern's error codes, in time,
 * and a refused request writes nothing.
 */

const ANSWER_WITHIN_MS = 10_000;
const CODES_4XX = Object.entries(ERRORS)
  .map(([code, { status }]) => [code, status] as const)
  .filter(([, status]) => status >= 400 && status < 500);
const CSRF = { 'x-tern-csrf': '1' };
const CSV = 'phone,name\n5511999990301,Ana\n';

let t: TestTern;
let receiver: WebhookReceiver;
let account: TestAccount;
let registry: OperationRegistry;
let ids: Record<string, string>;

beforeAll(async () => {
  // Only the API runs: no worker writes behind the sweep's back. Each login attempt comes from
  // an address of its own, so login protection does not slow the sweep down.
  [t, receiver] = await Promise.all([
    startTern({
      role: 'api',
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ALLOW_INSECURE: 'true', TRUST_PROXY: 'true' },
    }),
    WebhookReceiver.start(),
  ]);
  registry = OperationRegistry.fromDirectory(t.schema);
  account = await t.createAccount();
  const post = async (path: string, body: unknown, key: string) => {
    const response = await t.request('POST', path, { token: account.token, body });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body[key] as string;
  };
  const template = await post('/v1/templates', { name: 'Greeting', content: 'Hi {{name}}' }, 'template');
  const campaign = await post('/v1/campaigns', { name: 'Spring', template }, 'campaign');
  const contact = await post(`/v1/campaigns/${campaign}/contacts`, { phone: '5511999990201' }, 'contact');
  const message = await post(
    '/v1/messages/send',
    { to: '5511999990202', message: 'Hello', campaign },
    'message',
  );
  const webhook = await post(
    '/v1/webhooks',
    { url: `${receiver.url}/hook`, events: ['message.delivered'] },
    'webhook',
  );
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('file', new Blob([CSV]), 'contacts.csv');
  const job = (
    await send({
      label: 'seed',
      method: 'POST',
      path: `/v1/campaigns/${campaign}/contacts/import`,
      body: form,
    })
  ).json.job as string;
  const apikey = await post('/v1/api-keys', { name: 'Integration' }, 'api_key');
  const verification = await post('/v1/verifications', { to: '5511999990203' }, 'verification');
  ids = { template, campaign, contact, message, webhook, job, apikey, verification };
});
afterAll(async () => {
  await Promise.all([t?.stop(), receiver?.close()]);
});

interface Attack {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer | FormData;
}

interface Answer {
  status: number;
  text: string;
  json: any;
}

async function send(attack: Attack): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${account.token}`,
    'x-forwarded-for': randomAddress(),
    ...attack.headers,
  };
  const response = await fetch(`${t.url}${attack.path}`, {
    method: attack.method,
    headers,
    body: attack.body as BodyInit | undefined,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Left null: the assertion names the text.
  }
  return { status: response.status, text, json };
}

function randomAddress(): string {
  const bytes = randomBytes(3);
  return `10.${bytes[0]}.${bytes[1]}.${bytes[2]}`;
}

/** A 4xx in Tern's error body. */
function expectRefusal(attack: Attack, answer: Answer) {
  const label = `${attack.label}: ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, label).toBeGreaterThanOrEqual(400);
  expect(answer.status, label).toBeLessThan(500);
  const error = answer.json?.error;
  expect(error, label).toBeDefined();
  expect(Object.keys(answer.json).sort(), label).toEqual(['error', 'request']);
  expect(CODES_4XX.find(([code]) => code === error.code)?.[1], label).toBe(answer.status);
  expect(typeof error.message, label).toBe('string');
  for (const detail of error.details ?? [])
    expect(Object.keys(detail).sort(), label).toEqual(['field', 'issue']);
}

/** Rows of every table of the test's database, to show that a refused request wrote nothing. */
async function rowCounts(): Promise<Record<string, number>> {
  const { rows: tables } = await sql(
    t.database.url,
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
  );
  const counts = tables
    .map(({ tablename }) => `'${tablename}', (SELECT count(*) FROM "${tablename}")`)
    .join(', ');
  const { rows } = await sql(t.database.url, `SELECT json_build_object(${counts}) AS counts`);
  return rows[0].counts;
}

const key = (route: RestRoute) => `${route.method} ${route.path}`;

/** A body each route with a body accepts, so that each attack below changes one thing only. */
const VALID_BODIES: Record<string, () => Record<string, unknown>> = {
  'POST /v1/auth/login': () => ({ email: 'nobody@example.com', password: 'wrong password' }),
  'PATCH /v1/settings': () => ({ timezone: 'Europe/Lisbon' }),
  'POST /v1/settings/two-factor/confirm': () => ({ code: '123456' }),
  'DELETE /v1/settings/two-factor': () => ({ code: '123456' }),
  'POST /v1/api-keys': () => ({ name: 'Fine', expires_at: new Date(Date.now() + 86_400_000).toISOString() }),
  'POST /v1/messages/send': () => ({ to: '5511999990288', message: 'Hi', campaign: ids.campaign }),
  'POST /v1/messages': () => ({ to: '5511999990288', message: 'Hi', campaign: ids.campaign }),
  'POST /v1/messages/preview': () => ({ message: 'Hi' }),
  'POST /v1/campaigns': () => ({ name: 'Fine', template: ids.template, delay: 1, batch_size: 10 }),
  'PATCH /v1/campaigns/:campaign': () => ({ name: 'Fine', delay: 1 }),
  'POST /v1/campaigns/:campaign/contacts': () => ({
    phone: '5511999990299',
    name: 'Ana',
    email: 'ana@example.com',
    document: '1',
    tags: ['a'],
  }),
  'POST /v1/campaigns/:campaign/contacts/import': () => ({
    phone_column: 'phone',
    name_column: 'name',
    delimiter: ',',
    has_header: true,
    file_format: 'csv',
  }),
  'POST /v1/templates': () => ({ name: 'Fine name', content: 'Fine' }),
  'PATCH /v1/templates/:template': () => ({ name: 'Fine name', content: 'Fine' }),
  'POST /v1/webhooks': () => ({ url: `${receiver.url}/hook`, events: ['message.failed'] }),
  'PATCH /v1/webhooks/:webhook': () => ({ events: ['message.failed'] }),
  'POST /v1/webhooks/:webhook/replay': () => ({ since: new Date(Date.now() - 60_000).toISOString() }),
  'POST /v1/verifications': () => ({ to: '5511999990204', code_length: 6, ttl: 600 }),
  'POST /v1/verifications/:verification/check': () => ({ code: '123456' }),
};

const NUL = 'a\u0000b';
const LONE_SURROGATE = 'a\ud800b';
const HUNDRED_KB = 'x'.repeat(100 * 1024);
const ONE_MB = 'x'.repeat(1024 * 1024);

/** Values that no field of this type accepts. */
function wrongValues(type: GraphQLInputType): unknown[] {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner))
    return [
      123,
      { a: 1 },
      [{ a: 1 }],
      [[1]],
      ...wrongValues(inner.ofType)
        .filter((value) => typeof value !== 'string')
        .map((value) => [value]),
    ];
  const named = getNamedType(inner);
  if (isInputObjectType(named))
    return [
      'text',
      123,
      ['a'],
      JSON.parse('{"__proto__":{"polluted":true}}'),
      { constructor: { prototype: { polluted: true } } },
      { prototype: 1 },
    ];
  switch (named.name) {
    case 'Int':
      return ['12', 1.5, 2 ** 53, -(2 ** 40), true, { a: 1 }];
    case 'Float':
      return ['1', 'NaN', true, [1], { a: 1 }];
    case 'Boolean':
      return ['true', 1, 'yes', { a: 1 }];
    case 'ID':
    case 'String':
    case 'DateTime':
      return [true, 12.5, { a: 1 }, ['a'], NUL, LONE_SURROGATE, HUNDRED_KB];
    default:
      // An enum.
      return ['not_a_value', 1, { a: 1 }];
  }
}

/** The valid body as JSON bytes, with bytes that are not UTF-8 in its first text field. */
function invalidUtf8In(valid: Record<string, unknown>): Buffer {
  const [field] = Object.entries(valid).find(([, value]) => typeof value === 'string') ?? ['x'];
  const [head, tail] = JSON.stringify({ ...valid, [field]: '<<here>>' }).split('<<here>>');
  return Buffer.concat([Buffer.from(head!), Buffer.from([0x61, 0xff, 0xfe, 0xc3]), Buffer.from(tail!)]);
}

/** The valid body as JSON text, its first field replaced by an object nested 150,000 deep. */
function deepIn(valid: Record<string, unknown>): string {
  const [field] = Object.keys(valid);
  const [head, tail] = JSON.stringify({ ...valid, [field ?? 'x']: '<<here>>' }).split('"<<here>>"');
  return `${head}${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}${tail}`;
}

function bodyAttacks(route: RestRoute, path: string): Attack[] {
  const valid = VALID_BODIES[key(route)]!();
  const type = registry.get(route.operation).variableTypes.get(route.body!);
  const named = type && getNamedType(type);
  const fields = named && isInputObjectType(named) ? Object.values(named.getFields()) : [];
  const json = (label: string, body: string | Buffer, contentType = 'application/json'): Attack => ({
    label: `${key(route)} ${label}`,
    method: route.method,
    path,
    headers: { 'content-type': contentType },
    body,
  });
  const attacks: Attack[] = [];
  for (const field of fields) {
    const name = field.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    for (const value of wrongValues(field.type)) {
      attacks.push(
        json(`${name}=${JSON.stringify(value)?.slice(0, 40)}`, JSON.stringify({ ...valid, [name]: value })),
      );
    }
    attacks.push(json(`${name} of 1 MB`, JSON.stringify({ ...valid, [name]: ONE_MB })));
  }
  const text = JSON.stringify(valid).slice(1, -1);
  const deepArray = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
  attacks.push(
    json('__proto__ key', `{"__proto__":{"polluted":true},${text}}`),
    json('constructor.prototype key', `{"constructor":{"prototype":{"polluted":true}},${text}}`),
    json('prototype key', `{"prototype":{"polluted":true},${text}}`),
    json('nested __proto__', `{${text},"x":{"__proto__":{"polluted":true}}}`),
    json('unknown field', JSON.stringify({ ...valid, unknown_field: 1 })),
    json('array nested 500,000 deep', `{${text},"x":${deepArray}}`),
    json('object nested 10,000 deep', `{${text},"x":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`),
    json('object nested 150,000 deep', `{${text},"x":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}`),
    json('a field of the body nested 150,000 deep', deepIn(valid)),
    json('not JSON', `{${text}`),
    json('a JSON array', JSON.stringify([valid])),
    json('a JSON string', '"text"'),
    json('JSON null', 'null'),
    json('a JSON number', '1e999'),
    json('an empty body', ''),
    json('invalid UTF-8 in a text field', invalidUtf8In(valid)),
    json('text/plain', JSON.stringify(valid), 'text/plain'),
    json('a form', 'a=1&b=2', 'application/x-www-form-urlencoded'),
    json('XML', '<a>1</a>', 'application/xml'),
    json('a multipart body without a boundary', '--x\r\n', 'multipart/form-data'),
    json('a body over 1 MB', JSON.stringify({ ...valid, x: ONE_MB })),
  );
  return attacks;
}

function multipartAttacks(route: RestRoute, path: string): Attack[] {
  const valid = VALID_BODIES[key(route)]!();
  const boundary = 'sweep-boundary-1f3a';
  const part = (name: string, value: Buffer | string, filename?: string) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`,
      ),
      Buffer.from(value),
      Buffer.from('\r\n'),
    ]);
  const form = (parts: Buffer[], end = true): Attack['body'] =>
    Buffer.concat([...parts, Buffer.from(end ? `--${boundary}--\r\n` : '')]);
  const fields = (overrides: Record<string, string | Buffer> = {}) =>
    Object.entries({
      ...Object.fromEntries(Object.entries(valid).map(([k, v]) => [k, String(v)])),
      ...overrides,
    }).map(([name, value]) => part(name, value));
  const file = part(route.upload!.field, CSV, 'contacts.csv');
  const attack = (
    label: string,
    body: Attack['body'],
    contentType = `multipart/form-data; boundary=${boundary}`,
  ): Attack => ({
    label: `${key(route)} ${label}`,
    method: 'POST',
    path,
    headers: { 'content-type': contentType },
    body,
  });
  return [
    attack(
      'invalid UTF-8 in a field',
      form([...fields({ phone_column: Buffer.from([0x70, 0xff, 0xfe]) }), file]),
    ),
    attack('NUL in a field', form([...fields({ phone_column: NUL }), file])),
    attack('a field of 100 KB', form([...fields({ phone_column: HUNDRED_KB }), file])),
    attack('an unknown field', form([...fields({ prototype: '1' }), file])),
    attack(
      'a __proto__ field',
      form([...fields({ __proto__: 'x' } as Record<string, string>), part('__proto__', 'polluted'), file]),
    ),
    attack('a repeated field', form([...fields(), part('phone_column', 'phone'), file])),
    attack('has_header not a boolean', form([...fields({ has_header: 'maybe' }), file])),
    attack('no file', form(fields())),
    attack('two files', form([...fields(), file, file])),
    attack('a truncated form', form([...fields(), file.subarray(0, file.length - 10)], false)),
    attack('no boundary', form([...fields(), file]), 'multipart/form-data'),
    attack('a field with an empty name', form([...fields(), part('', 'phone'), file])),
    attack(
      'a field without a name',
      form([
        ...fields(),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data\r\n\r\nphone\r\n`),
        file,
      ]),
    ),
    attack('a file with an empty name', form([...fields(), part('', CSV, 'contacts.csv')])),
    attack(
      'a file without a name',
      form([
        ...fields(),
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; filename="contacts.csv"\r\n\r\n${CSV}\r\n`,
        ),
      ]),
    ),
    attack('JSON instead of a form', JSON.stringify(valid), 'application/json'),
  ];
}

const HOSTILE_IDS = [
  "' OR '1'='1",
  '1; DROP TABLE messages; --',
  '%00',
  'a%00b',
  '%FF%FE',
  '%ED%A0%80',
  '..%2F..%2Fetc%2Fpasswd',
  'x'.repeat(2000),
  '%E2%80%AE',
  '__proto__',
  'constructor',
];
const HOSTILE_NUMBERS = [
  '-1',
  '0',
  '1.5',
  '99999999999999999999',
  '1e3',
  'NaN',
  'Infinity',
  '0x10',
  '',
  '%00',
  "1'%20OR%201=1--",
  'x'.repeat(20_000),
];
// Text filters take any text, so only what no filter value can be: NUL, over any bound, over the header limit.
const HOSTILE_TEXT = ['%00', 'a%00b', 'x'.repeat(1000), 'x'.repeat(20_000)];

function routeAttacks(route: RestRoute): Attack[] {
  const path = route.path.replace(/:([a-z]+)/g, (_, param: string) => ids[param]!);
  const attacks: Attack[] = [];
  let index = 0;
  for (const hostile of HOSTILE_IDS) {
    for (const param of route.path.matchAll(/:([a-z]+)/g)) {
      const target = param[0];
      const hostilePath = route.path.replace(/:([a-z]+)/g, (match, name: string) =>
        match === target ? hostile : ids[name]!,
      );
      const body = route.body && !route.upload ? JSON.stringify(VALID_BODIES[key(route)]!()) : undefined;
      attacks.push({
        label: `${key(route)} ${target}=${hostile.slice(0, 30)} #${index++}`,
        method: route.method,
        path: hostilePath,
        headers: body ? { 'content-type': 'application/json' } : {},
        body,
      });
    }
  }
  for (const [name, variable] of Object.entries(route.query ?? {})) {
    const type = registry.get(route.operation).variableTypes.get(variable);
    const numeric = type !== undefined && ['Int', 'Float'].includes(getNamedType(type).name);
    for (const value of numeric ? HOSTILE_NUMBERS : HOSTILE_TEXT) {
      attacks.push({
        label: `${key(route)} ?${name}=${value.slice(0, 30)}`,
        method: route.method,
        path: `${path}?${name}=${value}`,
      });
    }
    attacks.push({
      label: `${key(route)} ?${name} twice`,
      method: route.method,
      path: `${path}?${name}=1&${name}=2`,
    });
  }
  if (route.upload) attacks.push(...multipartAttacks(route, path));
  else if (route.body) attacks.push(...bodyAttacks(route, path));
  for (const header of Object.keys(route.headers ?? {})) {
    const body = JSON.stringify(VALID_BODIES[key(route)]?.() ?? {});
    for (const value of ['', 'x'.repeat(300)]) {
      attacks.push({
        label: `${key(route)} ${header} of ${value.length}`,
        method: route.method,
        path,
        headers: { 'content-type': 'application/json', [header]: value },
        body,
      });
    }
  }
  return attacks;
}

describe('every /v1 route', () => {
  it('has a valid body to attack from, wherever it takes one', () => {
    expect(routes.filter((route) => route.body && !VALID_BODIES[key(route)]).map(key)).toEqual([]);
  });

  it('answers hostile input with a 4xx and its error code, in time, and writes nothing', {
    timeout: 120_000,
  }, async () => {
    for (const route of routes) {
      const attacks = routeAttacks(route);
      const before = await rowCounts();
      // A few at a time: enough to be quick, few enough that a slow answer is not queueing.
      for (let i = 0; i < attacks.length; i += 4) {
        const batch = attacks.slice(i, i + 4);
        const answered = await Promise.all(
          batch.map(async (attack) => [attack, await send(attack)] as const),
        );
        for (const [attack, answer] of answered) expectRefusal(attack, answer);
      }
      expect(await rowCounts(), `${key(route)} wrote rows`).toEqual(before);
    }
  });

  it('stores SQL-looking text, right-to-left overrides and emoji sequences as sent', async () => {
    for (const text of [
      "Robert'); DROP TABLE templates;--",
      '1 OR 1=1 /* */ UNION SELECT *',
      'abc\u202Egnp.exe',
      '👩‍👩‍👧‍👦 family 🏳️‍🌈',
      'ﷺ ‮ \u200B\uFEFF e\u0301',
    ]) {
      const created = await t.request('POST', '/v1/templates', {
        token: account.token,
        body: { name: `T ${text}`, content: text },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const read = await t.request('GET', `/v1/templates/${created.body.template}`, { token: account.token });
      expect(read.body).toMatchObject({ name: `T ${text}`, content: text });
    }
  });
});

/** Variables a field accepts, for every field with a required argument. */
const VALID_VARIABLES: Record<string, () => Record<string, unknown>> = {
  'Query.campaign': () => ({ id: ids.campaign }),
  'Query.contact': () => ({ campaign: ids.campaign, id: ids.contact }),
  'Query.contacts': () => ({ campaign: ids.campaign, tag: 'a', page: 1, perPage: 10 }),
  'Query.importJob': () => ({ campaign: ids.campaign, id: ids.job }),
  'Query.message': () => ({ id: ids.message }),
  'Mutation.cancelMessage': () => ({ id: ids.message }),
  'Query.messages': () => ({
    campaign: ids.campaign,
    to: '5511999990202',
    status: 'queued',
    page: 1,
    perPage: 10,
  }),
  'Query.previewMessage': () => ({ input: { message: 'Hi' } }),
  'Query.messageStats': () => ({
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-02T00:00:00Z',
    interval: 'HOUR',
    campaign: ids.campaign,
    groupBy: ['STATUS', 'COUNTRY'],
  }),
  'Query.deliveryTimes': () => ({
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-02T00:00:00Z',
    campaign: ids.campaign,
  }),
  'Query.template': () => ({ id: ids.template }),
  'Query.verification': () => ({ id: ids.verification }),
  'Query.verificationStats': () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }),
  'Query.fraudDecisions': () => ({ days: 7 }),
  'Query.webhook': () => ({ id: ids.webhook }),
  'Query.webhookDeliveries': () => ({ webhook: ids.webhook, page: 1, perPage: 10 }),
  'Query.campaigns': () => ({ status: 'scheduled', page: 1, perPage: 10 }),
  'Query.templates': () => ({ page: 1, perPage: 10 }),
  'Query.webhooks': () => ({ page: 1, perPage: 10 }),
  'Query.optOuts': () => ({ page: 1, perPage: 10 }),
  'Mutation.addContact': () => ({
    campaign: ids.campaign,
    input: {
      phone: '5511999990277',
      name: 'Ana',
      email: 'ana@example.com',
      document: '1',
      tags: ['a'],
      timezone: 'Europe/Lisbon',
    },
  }),
  'Mutation.cancelCampaign': () => ({ id: ids.campaign }),
  'Mutation.pauseCampaign': () => ({ id: ids.campaign }),
  'Mutation.resumeCampaign': () => ({ id: ids.campaign }),
  'Mutation.scheduleCampaign': () => ({ id: ids.campaign }),
  'Mutation.startCampaign': () => ({ id: ids.campaign }),
  'Mutation.unscheduleCampaign': () => ({ id: ids.campaign }),
  'Mutation.deleteCampaign': () => ({ id: ids.campaign }),
  'Mutation.createCampaign': () => ({
    input: {
      name: 'Fine',
      template: ids.template,
      delay: 1,
      batchSize: 10,
      validity: 3600,
      sendWindow: { days: ['mon'], start: '09:00', end: '17:00' },
    },
  }),
  'Mutation.updateCampaign': () => ({
    id: ids.campaign,
    input: { name: 'Fine', delay: 1, sendWindow: { days: ['mon'], start: '09:00', end: '17:00' } },
  }),
  'Mutation.createTemplate': () => ({ input: { name: 'Fine name', content: 'Fine' } }),
  'Mutation.startVerification': () => ({ input: { to: '5511999990205', codeLength: 6, ttl: 600 } }),
  'Mutation.checkVerification': () => ({ id: ids.verification, input: { code: '123456' } }),
  'Mutation.deleteTemplate': () => ({ id: ids.template }),
  'Mutation.updateTemplate': () => ({ id: ids.template, input: { name: 'Fine name', content: 'Fine' } }),
  'Mutation.registerWebhook': () => ({ input: { url: `${receiver.url}/hook`, events: ['message_failed'] } }),
  'Mutation.deleteWebhook': () => ({ id: ids.webhook }),
  'Mutation.updateWebhook': () => ({ id: ids.webhook, input: { events: ['message_failed'] } }),
  'Mutation.replayWebhook': () => ({
    id: ids.webhook,
    input: { since: new Date(Date.now() - 60_000).toISOString() },
  }),
  'Mutation.importContacts': () => ({
    campaign: ids.campaign,
    file: null,
    input: { phoneColumn: 'phone', delimiter: ',' },
  }),
  'Mutation.sendMessage': () => ({
    input: { to: '5511999990288', message: 'Hi', campaign: ids.campaign },
    idempotencyKey: 'k1',
  }),
  'Mutation.login': () => ({ input: { email: 'nobody@example.com', password: 'wrong password' } }),
  'Mutation.updateSettings': () => ({
    input: {
      timezone: 'Europe/Lisbon',
      defaultSender: 'Tern',
      messageValidity: 3600,
      sendWindow: { days: ['mon'], start: '09:00', end: '17:00' },
    },
  }),
  'Mutation.confirmTwoFactor': () => ({ input: { code: '123456' } }),
  'Mutation.disableTwoFactor': () => ({ input: { code: '123456' } }),
  'Query.apiKeys': () => ({ page: 1, perPage: 10 }),
  'Mutation.createApiKey': () => ({
    input: { name: 'Fine', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
  }),
  'Mutation.revokeApiKey': () => ({ id: ids.apikey }),
};

// Stands for a value nested 10,000 deep, written into the JSON text: the test's own
// JSON.stringify would run out of stack on it.
const DEEP = '<<deep>>';
const DEEP_JSON = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

async function runGraphQL(root: RootField, variables: Record<string, unknown>): Promise<Answer> {
  const document = rootFieldDocument(root, variables);
  const operations = JSON.stringify({ query: document, variables }).replace(JSON.stringify(DEEP), DEEP_JSON);
  const upload = uploadArgument(root);
  if (!upload) {
    return send({
      label: root.name,
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json' },
      body: operations,
    });
  }
  const form = new FormData();
  form.append('operations', operations);
  form.append('map', JSON.stringify({ 0: [`variables.${upload}`] }));
  form.append('0', new Blob([CSV]), 'contacts.csv');
  return send({ label: root.name, method: 'POST', path: '/graphql', headers: CSRF, body: form });
}

/**
 * Runs one root field with its values written into the document as literals (a file, which
 * cannot be, goes as a variable).
 */
async function runGraphQLLiterals(root: RootField, values: Record<string, unknown>): Promise<Answer> {
  const upload = uploadArgument(root);
  const written = root.field.args
    .filter((arg) => arg.name !== upload && values[arg.name] !== undefined)
    .map(
      (arg) => `${arg.name}: ${print(astFromValue(coerceInputValue(values[arg.name], arg.type), arg.type)!)}`,
    );
  const uploadType = root.field.args.find((arg) => arg.name === upload)?.type.toString();
  const document = `${root.operation} ${upload ? `($${upload}: ${uploadType})` : ''} { result: ${root.field.name}(${[
    ...written,
    ...(upload ? [`${upload}: $${upload}`] : []),
  ].join(', ')}) ${resultSelection(getNamedType(root.field.type))} }`;
  if (!upload) {
    return send({
      label: root.name,
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: document }),
    });
  }
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: document, variables: { [upload]: null } }));
  form.append('map', JSON.stringify({ 0: [`variables.${upload}`] }));
  form.append('0', new Blob([CSV]), 'contacts.csv');
  return send({ label: root.name, method: 'POST', path: '/graphql', headers: CSRF, body: form });
}

/** Refused: a typed error result, or GraphQL errors with a 4xx code of Tern's or of the protocol; never internal_error. */
function expectGraphQLRefusal(label: string, answer: Answer) {
  const text = `${label}: ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, text).toBeLessThan(500);
  expect(answer.json, text).not.toBeNull();
  const errors: { message: string; extensions?: { code?: string } }[] = answer.json.errors ?? [];
  for (const error of errors) {
    expect(error.extensions?.code, text).not.toBe('internal_error');
    expect(error.message, text).not.toMatch(/prisma|postgres|sql|stack|at \w+ \(/i);
  }
  if (errors.length === 0) expect(answer.json.data?.result?.__typename, text).toMatch(/Error$/);
}

describe('every GraphQL query and mutation', () => {
  it('has valid variables to attack from, wherever it takes arguments', () => {
    const missing = rootFields(t.schema).filter(
      (root) => root.field.args.length > 0 && !VALID_VARIABLES[root.name],
    );
    expect(missing.map((root) => root.name)).toEqual([]);
  });

  it('refuses hostile values in every argument and input field, and writes nothing', {
    timeout: 120_000,
  }, async () => {
    for (const root of rootFields(t.schema).filter((r) => r.field.args.length > 0)) {
      const valid = VALID_VARIABLES[root.name]!();
      const before = await rowCounts();
      const schema = t.schema;
      const leaves = [
        ...argumentPaths(root.field, (name) => name !== 'Upload' && !isInputObjectType(schema.getType(name))),
        ...root.field.args
          .filter((arg) => isInputObjectType(getNamedType(arg.type)))
          .map((arg) => [arg.name]),
      ];
      const cases: { label: string; variables: Record<string, unknown> }[] = [];
      for (const path of leaves) {
        const argument = root.field.args.find((arg) => arg.name === path[0])!;
        let type: GraphQLInputType = argument.type;
        for (const part of path.slice(1)) {
          const named = getNamedType(type);
          type = isInputObjectType(named) ? named.getFields()[part]!.type : type;
        }
        for (const value of wrongValues(type)) {
          cases.push({
            label: `${root.name} ${path.join('.')}=${JSON.stringify(value)?.slice(0, 40)}`,
            variables: setAt(valid, path, value),
          });
        }
      }
      for (const arg of root.field.args.filter((a) => isInputObjectType(getNamedType(a.type)))) {
        cases.push({
          label: `${root.name} ${arg.name} with an unknown field`,
          variables: setAt(valid, [arg.name, 'unknownField'], 1),
        });
        cases.push({
          label: `${root.name} ${arg.name} 10,000 deep`,
          variables: setAt(valid, [arg.name, 'x'], DEEP),
        });
      }
      for (let i = 0; i < cases.length; i += 4) {
        const batch = cases.slice(i, i + 4);
        const answered = await Promise.all(
          batch.map(async (c) => [c.label, await runGraphQL(root, c.variables)] as const),
        );
        for (const [label, answer] of answered) expectGraphQLRefusal(label, answer);
      }
      expect(await rowCounts(), `${root.name} wrote rows`).toEqual(before);
    }
  });

  it('refuses a NUL written into the document, in every text argument and input field, as in a variable', {
    timeout: 120_000,
  }, async () => {
    // The escape \u0000 is valid GraphQL: the parser reads it into a NUL, which PostgreSQL refuses.
    for (const root of rootFields(t.schema).filter((r) => r.field.args.length > 0)) {
      const valid = VALID_VARIABLES[root.name]!();
      const before = await rowCounts();
      const paths = argumentPaths(root.field, (name) => name === 'String' || name === 'ID');
      for (const path of paths) {
        const label = `${root.name} ${path.join('.')} written as "a\\u0000b"`;
        const answer = await runGraphQLLiterals(root, setAt(valid, path, NUL));
        expectGraphQLRefusal(label, answer);
        // A list of text written as one string is a list of one: its string is at position 0.
        expect(answer.json.errors?.[0]?.extensions, `${label}: ${answer.text.slice(0, 300)}`).toMatchObject({
          code: 'validation_error',
          details: [
            {
              field: expect.stringMatching(new RegExp(`^${path.join('\\.')}(\\.0)?$`)),
              issue: 'invalid_value',
            },
          ],
        });
      }
      expect(await rowCounts(), `${root.name} wrote rows`).toEqual(before);
    }
  });

  it('refuses malformed GraphQL requests with a 4xx', async () => {
    const query = '{ settings { timezone } }';
    const attacks: Attack[] = [
      {
        label: 'not JSON',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: '{"query":',
      },
      {
        label: 'invalid UTF-8',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat([
          Buffer.from('{"query":"{ settings { timezone } }","x":"'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from('"}'),
        ]),
      },
      {
        label: 'deep JSON',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: `{"query":"mutation ($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }","variables":{"input":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}}`,
      },
      {
        label: 'a query of 1 MB',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ settings { timezone } } #${ONE_MB}` }),
      },
      {
        label: 'query not a string',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: { a: 1 } }),
      },
      {
        label: 'variables not an object',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: [1] }),
      },
      {
        label: '__proto__ in variables',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: `{"query":${JSON.stringify(query)},"variables":{"__proto__":{"x":1}}}`,
      },
      {
        label: 'an empty batch',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: '[]',
      },
      {
        label: 'a NUL in the query',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ settings { time\u0000zone } }` }),
      },
      {
        label: 'a lone surrogate in the query',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ template(id: "\ud800") { __typename } }` }),
      },
      {
        label: 'text/plain',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ query }),
      },
      {
        label: 'a form',
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `query=${encodeURIComponent(query)}`,
      },
      {
        label: 'a broken multipart',
        method: 'POST',
        path: '/graphql',
        headers: { ...CSRF, 'content-type': 'multipart/form-data; boundary=x' },
        body: '--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":',
      },
      {
        label: 'multipart with an unnamed part',
        method: 'POST',
        path: '/graphql',
        headers: { ...CSRF, 'content-type': 'multipart/form-data; boundary=x' },
        body: `--x\r\nContent-Disposition: form-data; name=""\r\n\r\n${JSON.stringify({ query })}\r\n--x\r\nContent-Disposition: form-data\r\n\r\n{}\r\n--x--\r\n`,
      },
      {
        label: 'multipart without map',
        method: 'POST',
        path: '/graphql',
        headers: { ...CSRF, 'content-type': 'multipart/form-data; boundary=x' },
        body: `--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query })}\r\n--x--\r\n`,
      },
      {
        label: 'GET with an operation repeated',
        method: 'GET',
        path: `/graphql?query=${encodeURIComponent(query)}&query=x`,
        headers: CSRF,
      },
    ];
    for (const attack of attacks) {
      const answer = await send(attack);
      const text = `${attack.label}: ${answer.status} ${answer.text.slice(0, 300)}`;
      // GraphQL over HTTP answers a document it cannot run with 200 and errors when the client
      // accepts application/json (as these do); anything it cannot read at all is a 4xx.
      if (answer.status === 200) expect(answer.json.data ?? null, text).toBeNull();
      else expect(answer.status, text).toBeGreaterThanOrEqual(400);
      expectGraphQLRefusal(attack.label, answer);
    }
  });
});
