import { readFile } from 'node:fs/promises';
import { URI } from 'otpauth';
import type { ErrorCode } from '../../src/errors.js';
import type { ApiExamples, OperationExamples } from '../../src/rest/openapi-examples.js';
import { type RestRoute, routes } from '../../src/rest/route-table.js';
import { createTestDatabase, sql } from './database.js';
import { DatabaseRelay } from './database-relay.js';
import { type HttpResult, startTern, type TestTern } from './tern.js';
import { waitFor } from './wait.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * The examples of the reference, as exchanges with a real Tern: each route is called the way a
 * client would, and what Tern answered is what the document shows. test/api-examples.test.ts runs
 * this, compares it with schema/openapi-examples.json, and writes that file when asked to.
 */

/** The error bodies that say the same on every route: one recording stands for all. */
export const SHARED_CODES: readonly ErrorCode[] = [
  'bad_request',
  'unauthorized',
  'payload_too_large',
  'rate_limited',
  'internal_error',
  'service_unavailable',
];

/** The receiver of the recording listens on loopback; the examples show a public address in its place. */
export const EXAMPLE_WEBHOOK_ORIGIN = 'https://hooks.example.com';

const CONTACTS_CSV = new URL('../../examples/contacts.csv', import.meta.url);
const MISSING = {
  message: 'msg_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  campaign: 'cmp_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  contact: 'cnt_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  template: 'tpl_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  job: 'job_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  webhook: 'whk_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  apikey: 'key_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
  verification: 'vrf_0192f5d1c9a87f3e8b5c4d2e1f0a9b8c',
};

interface Call {
  token?: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  rawBody?: string;
  /** A multipart form: its text fields and a file part. */
  form?: { fields: Record<string, string>; file: { field: string; name: string; content: Buffer } };
}

const routeOf = (operationId: string): RestRoute => {
  const route = routes.find((candidate) => (candidate.operationId ?? candidate.operation) === operationId);
  if (!route) throw new Error(`no route runs ${operationId}`);
  return route;
};

class Recorder {
  readonly shared: ApiExamples['shared'] = {};
  private readonly successes = new Map<string, Omit<OperationExamples, 'errors'>>();
  private readonly errors = new Map<string, OperationExamples['errors']>();

  constructor(private readonly t: TestTern) {}

  async call(operationId: string, input: Call): Promise<HttpResult> {
    const route = routeOf(operationId);
    let path = route.path.replace(/:(\w+)/g, (_, name: string) => {
      const value = input.params?.[name];
      if (value === undefined) throw new Error(`${operationId}: no value for :${name}`);
      return encodeURIComponent(value);
    });
    if (input.query) path += `?${new URLSearchParams(input.query)}`;
    if (!input.form) return this.t.request(route.method, path, input);
    const form = new FormData();
    for (const [name, value] of Object.entries(input.form.fields)) form.append(name, value);
    form.append(
      input.form.file.field,
      new Blob([new Uint8Array(input.form.file.content)]),
      input.form.file.name,
    );
    // The multipart body exactly as fetch would send it, with its boundary.
    const encoded = new Response(form);
    return this.t.request(route.method, path, {
      token: input.token,
      rawBody: Buffer.from(await encoded.arrayBuffer()),
      headers: { 'content-type': encoded.headers.get('content-type') ?? '' },
    });
  }

  /** A call that must succeed; the first success of each route is its example. */
  async ok(operationId: string, input: Call = {}): Promise<any> {
    const route = routeOf(operationId);
    const response = await this.call(operationId, input);
    if (response.status !== route.status)
      throw new Error(`${operationId} answered ${response.status}: ${JSON.stringify(response.body)}`);
    if (!this.successes.has(operationId))
      this.successes.set(operationId, {
        ...(input.form
          ? { request: { ...input.form.fields, [input.form.file.field]: input.form.file.name } }
          : input.body
            ? { request: input.body }
            : {}),
        ...(input.params || input.query || input.headers
          ? { parameters: { ...input.params, ...input.query, ...input.headers } }
          : {}),
        response: response.body,
      });
    return response.body;
  }

  /** A call that must be refused with `code`; the answer is the example of that code. */
  async refused(operationId: string, code: ErrorCode, input: Call = {}): Promise<void> {
    const response = await this.call(operationId, input);
    if (response.body?.error?.code !== code)
      throw new Error(
        `${operationId} should be ${code}: ${response.status} ${JSON.stringify(response.body)}`,
      );
    if (SHARED_CODES.includes(code)) {
      this.shared[code] ??= response.body;
      return;
    }
    const errors = this.errors.get(operationId) ?? {};
    errors[code] ??= response.body;
    this.errors.set(operationId, errors);
  }

  /** What was recorded, in the order of the route table. */
  examples(): ApiExamples {
    const operations: ApiExamples['operations'] = {};
    for (const route of routes) {
      const operationId = route.operationId ?? route.operation;
      const success = this.successes.get(operationId);
      if (!success) throw new Error(`the recording calls ${operationId} with no success`);
      operations[operationId] = { ...success, errors: this.errors.get(operationId) ?? {} };
    }
    return { shared: this.shared, operations };
  }
}

/** Runs every /v1 route against real Terns and returns what they answered. */
export async function recordApiExamples(): Promise<ApiExamples> {
  const receiver = await WebhookReceiver.start();
  const t = await startTern({
    env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SIMULATOR_DELAY_MS: '20' },
  });
  try {
    const recorder = new Recorder(t);
    await recordEverything(t, recorder, receiver);
    await recordServiceFailures(recorder);
    const json = JSON.stringify(recorder.examples()).replaceAll(receiver.url, EXAMPLE_WEBHOOK_ORIGIN);
    return JSON.parse(json) as ApiExamples;
  } finally {
    await t.stop();
    await receiver.close();
  }
}

async function recordEverything(t: TestTern, r: Recorder, receiver: WebhookReceiver) {
  const stray = { query: { verbose: 'true' } };
  const ana = await t.createAccount('ana@example.com', 'correct horse battery');
  const bruno = await t.createAccount('bruno@example.com', 'another long password');

  // Accounts and settings.
  const { token } = await r.ok('Login', { body: { email: ana.email, password: ana.password } });
  const as = (extra: Call = {}): Call => ({ token, ...extra });
  await r.refused('Login', 'invalid_credentials', { body: { email: ana.email, password: 'wrong password' } });
  await r.refused('Login', 'validation_error', { body: { email: 'ana@example' } });
  await r.refused('Settings', 'unauthorized', {});
  // Senders the operator approved for Ana (accounts senders), which her settings show.
  await t.tern.services.accountSenders.add(ana.account, { sender: 'ACME' });
  await t.tern.services.accountSenders.add(ana.account, { sender: '+5511999990000', countries: ['BR'] });
  await r.ok('Settings', as());
  await r.refused('Settings', 'validation_error', as(stray));
  await r.ok('UpdateSettings', as({ body: { timezone: 'America/Sao_Paulo', default_sender: 'Tern' } }));
  await r.refused('UpdateSettings', 'validation_error', as({ body: { timezone: 'Mars/Olympus' } }));

  // API keys.
  const { key } = await r.ok('CreateApiKey', as({ body: { name: 'Deploys' } }));
  const byKey = (extra: Call = {}): Call => ({ token: key, ...extra });
  await r.refused('CreateApiKey', 'validation_error', as({ body: { name: '', expires_at: 'tomorrow' } }));
  await r.refused('CreateApiKey', 'forbidden', byKey({ body: { name: 'From a key' } }));
  const old = await r.call('CreateApiKey', as({ body: { name: 'Old laptop' } }));
  await r.ok('ApiKeys', as({ query: { per_page: '10' } }));
  await r.refused('ApiKeys', 'validation_error', as({ query: { per_page: '0' } }));
  await r.ok('RevokeApiKey', as({ params: { apikey: old.body.api_key } }));
  await r.refused('RevokeApiKey', 'not_found', as({ params: { apikey: MISSING.apikey } }));
  await r.refused('RevokeApiKey', 'forbidden', byKey({ params: { apikey: old.body.api_key } }));
  await r.refused('RevokeApiKey', 'validation_error', as({ params: { apikey: MISSING.apikey }, ...stray }));

  // An account holds a bounded number of keys.
  for (let made = 0; made < 200; made++) {
    const more = await r.call('CreateApiKey', { token: bruno.token, body: { name: `Device ${made}` } });
    if (more.status === 409) break;
  }
  await r.refused('CreateApiKey', 'conflict', { token: bruno.token, body: { name: 'One too many' } });

  // Two-factor login, on a second account.
  const setUp = await r.ok('SetUpTwoFactor', { token: bruno.token });
  await r.refused('SetUpTwoFactor', 'forbidden', byKey());
  await r.refused('SetUpTwoFactor', 'validation_error', { token: bruno.token, ...stray });
  const totp = URI.parse(setUp.otpauth_url);
  await r.refused('ConfirmTwoFactor', 'invalid_state', as({ body: { code: '492039' } }));
  await r.refused('ConfirmTwoFactor', 'forbidden', byKey({ body: { code: '492039' } }));
  const confirmed = await r.ok('ConfirmTwoFactor', {
    token: bruno.token,
    body: { code: totp.generate({ timestamp: t.clock.now().getTime() }) },
  });
  await r.refused('ConfirmTwoFactor', 'validation_error', { token: bruno.token, body: { code: '' } });
  await r.refused('SetUpTwoFactor', 'invalid_state', { token: bruno.token });
  await r.refused('Login', 'otp_required', { body: { email: bruno.email, password: bruno.password } });
  await r.refused('DisableTwoFactor', 'invalid_state', as({ body: { code: '492039' } }));
  await r.refused('DisableTwoFactor', 'forbidden', byKey({ body: { code: '492039' } }));
  await r.ok('DisableTwoFactor', { token: bruno.token, body: { code: confirmed.recovery_codes[0] } });
  await r.refused('DisableTwoFactor', 'validation_error', { token: bruno.token, body: {} });

  // Webhooks first, so that the messages below have callbacks to show.
  const hooks = `${receiver.url}/tern`;
  const events = ['message.delivered', 'message.failed', 'message.replied'];
  const { webhook } = await r.ok('RegisterWebhook', as({ body: { url: hooks, events } }));
  await r.refused(
    'RegisterWebhook',
    'validation_error',
    as({ body: { url: 'ftp://hooks.example.com', events: ['message.lost'] } }),
  );
  await r.ok('Webhooks', as({ query: { per_page: '10' } }));
  await r.refused('Webhooks', 'validation_error', as({ query: { per_pgae: '10' } }));
  await r.ok('Webhook', as({ params: { webhook } }));
  await r.refused('Webhook', 'not_found', as({ params: { webhook: MISSING.webhook } }));
  await r.refused('Webhook', 'validation_error', as({ params: { webhook }, ...stray }));
  await r.ok('UpdateWebhook', as({ params: { webhook }, body: { url: `${receiver.url}/sms-events` } }));
  await r.refused(
    'UpdateWebhook',
    'not_found',
    as({ params: { webhook: MISSING.webhook }, body: { events } }),
  );
  await r.refused('UpdateWebhook', 'validation_error', as({ params: { webhook }, body: { events: [] } }));
  const spare = await r.call('RegisterWebhook', as({ body: { url: `${receiver.url}/spare`, events } }));
  await r.ok('DeleteWebhook', as({ params: { webhook: spare.body.webhook } }));
  await r.refused('DeleteWebhook', 'not_found', as({ params: { webhook: MISSING.webhook } }));
  await r.refused('DeleteWebhook', 'validation_error', as({ params: { webhook }, ...stray }));

  // Messages. The simulator delivers every number but those ending 0001, which fail.
  await r.refused('SendMessage', 'bad_request', {
    ...as(),
    rawBody: '{"to": "5511999990003", "message": ',
    headers: { 'content-type': 'application/json' },
  });
  await r.refused('SendMessage', 'payload_too_large', {
    ...as(),
    rawBody: JSON.stringify({ to: '5511999990003', message: 'x'.repeat(1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  const sent = await r.ok(
    'SendMessage',
    as({
      headers: { 'Idempotency-Key': 'order-1001' },
      body: { to: '5511999990003', message: 'Your order has shipped' },
    }),
  );
  await r.refused(
    'SendMessage',
    'validation_error',
    as({ headers: { 'Idempotency-Key': 'order-1001' }, body: { to: '+55 11 9999', message: '' } }),
  );
  // Each callback logged before the next message, so that the webhook's log is in the same order in every run.
  const logged = (count: number) =>
    waitFor(async () => {
      const log = await r.call('WebhookDeliveries', as({ params: { webhook } }));
      return log.body.total >= count ? true : null;
    });
  await logged(1);
  await r.ok(
    'CreateMessage',
    as({ body: { to: '+5511999990001', message: 'Your table is ready', from: 'ACME' } }),
  );
  await r.refused(
    'CreateMessage',
    'validation_error',
    as({ body: { to: '5511999990003', message: 'Hi', from: 'NOTAPPROVED' } }),
  );
  await r.refused('CreateMessage', 'validation_error', as({ body: { To: '5511999990003', text: 'Hi' } }));
  await logged(2);
  // An operator's daily quota of 2 segments, which the two sends above used.
  await t.tern.services.accountQuotas.setLimits(ana.account, { dailySegments: 2 });
  await r.refused(
    'SendMessage',
    'quota_exceeded',
    as({ body: { to: '5511999990003', message: 'One more' } }),
  );
  await r.refused(
    'CreateMessage',
    'quota_exceeded',
    as({ body: { to: '5511999990003', message: 'One more' } }),
  );
  await t.tern.services.accountQuotas.setLimits(ana.account, { dailySegments: null });
  await r.ok('PreviewMessage', as({ body: { message: 'Olá! Seu pedido saiu para entrega 🚚' } }));
  await r.refused('PreviewMessage', 'validation_error', as({ body: {} }));
  await r.ok('Message', as({ params: { message: sent.message } }));
  await r.refused('Message', 'not_found', as({ params: { message: MISSING.message } }));
  await r.refused('Message', 'validation_error', as({ params: { message: sent.message }, ...stray }));
  const tomorrow = new Date(t.clock.now().getTime() + 24 * 60 * 60 * 1000).toISOString();
  const reminder = await r.call(
    'SendMessage',
    as({
      body: { to: '5511999990004', message: 'Your appointment is tomorrow at 10:00', send_at: tomorrow },
    }),
  );
  await r.ok('CancelMessage', as({ params: { message: reminder.body.message } }));
  await r.refused('CancelMessage', 'invalid_state', as({ params: { message: sent.message } }));
  await r.refused('CancelMessage', 'not_found', as({ params: { message: MISSING.message } }));
  await r.refused('CancelMessage', 'validation_error', as({ params: { message: sent.message }, ...stray }));
  await waitFor(async () => {
    const list = await r.call('Messages', as({ query: { status: 'failed' } }));
    return list.body.total === 1 ? true : null;
  });
  await r.ok('Messages', as({ query: { status: 'delivered', per_page: '5' } }));
  await r.refused('Messages', 'validation_error', as({ query: { status: 'lost', per_pgae: '5' } }));

  // The webhook's log and replay, now that it has had callbacks.
  await r.ok('WebhookDeliveries', as({ params: { webhook }, query: { per_page: '5' } }));
  await r.refused('WebhookDeliveries', 'not_found', as({ params: { webhook: MISSING.webhook } }));
  await r.refused('WebhookDeliveries', 'validation_error', as({ params: { webhook }, query: { page: '0' } }));
  const hourAgo = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
  await r.ok('ReplayWebhook', as({ params: { webhook }, body: { since: hourAgo } }));
  await r.refused(
    'ReplayWebhook',
    'not_found',
    as({ params: { webhook: MISSING.webhook }, body: { since: hourAgo } }),
  );
  await r.refused(
    'ReplayWebhook',
    'validation_error',
    as({ params: { webhook }, body: { since: 'yesterday' } }),
  );
  await r.ok('RotateWebhookSecret', as());
  await r.refused('RotateWebhookSecret', 'validation_error', as(stray));

  // Opt-outs: the number answers STOP, through the carrier's sink as a carrier's reply would.
  await t.tern.services.carrierReports.sinkFor('simulator').inbound({
    carrierMessageId: 'sim-stop-1',
    from: '5511999990003',
    to: null,
    text: 'STOP',
    at: t.clock.now(),
    inReplyTo: sent.message,
  });
  await waitFor(async () => {
    const list = await r.call('OptOuts', as());
    return list.body.total === 1 ? true : null;
  });
  await r.ok('OptOuts', as({ query: { per_page: '10' } }));
  await r.refused('OptOuts', 'validation_error', as({ query: { per_page: '101' } }));

  // Statistics of the messages sent above, by day of the account's time zone, split by status and country.
  const dayAgo = new Date(t.clock.now().getTime() - 86_400_000).toISOString();
  const inAnHour = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
  await r.ok(
    'MessageStats',
    as({ query: { from: dayAgo, to: inAnHour, interval: 'day', group_by: 'status,country' } }),
  );
  await r.refused(
    'MessageStats',
    'validation_error',
    as({ query: { from: '2025-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' } }),
  );
  await r.refused('MessageStats', 'not_found', as({ query: { campaign: MISSING.campaign } }));

  // Templates.
  const { template } = await r.ok(
    'CreateTemplate',
    as({ body: { name: 'Promo', content: 'Hi {{name}}, 20% off today!' } }),
  );
  await r.refused('CreateTemplate', 'validation_error', as({ body: { name: 'P', content: '' } }));
  await r.ok('Templates', as({ query: { per_page: '10' } }));
  await r.refused('Templates', 'validation_error', as({ query: { page: 'two' } }));
  await r.ok('Template', as({ params: { template } }));
  await r.refused('Template', 'not_found', as({ params: { template: MISSING.template } }));
  await r.refused('Template', 'validation_error', as({ params: { template }, ...stray }));
  await r.ok(
    'UpdateTemplate',
    as({ params: { template }, body: { content: 'Hi {{name}}, 25% off today only!' } }),
  );
  await r.refused(
    'UpdateTemplate',
    'not_found',
    as({ params: { template: MISSING.template }, body: { content: 'Hi' } }),
  );
  await r.refused(
    'UpdateTemplate',
    'validation_error',
    as({ params: { template }, body: { name: 'Promo' } }),
  );
  const draft = await r.call('CreateTemplate', as({ body: { name: 'Draft', content: 'Hello {{name}}' } }));
  await r.ok('DeleteTemplate', as({ params: { template: draft.body.template } }));
  await r.refused('DeleteTemplate', 'not_found', as({ params: { template: MISSING.template } }));
  await r.refused('DeleteTemplate', 'validation_error', as({ params: { template }, ...stray }));

  // A campaign, its contacts (one by one and from examples/contacts.csv), and its run.
  const { campaign } = await r.ok(
    'CreateCampaign',
    as({ body: { name: 'Spring sale', template, batch_size: 100 } }),
  );
  await r.refused('DeleteTemplate', 'conflict', as({ params: { template } }));
  await r.refused('CreateCampaign', 'validation_error', as({ body: { name: '', batch_size: 0 } }));
  const { contact } = await r.ok(
    'AddContact',
    as({ params: { campaign }, body: { phone: '+5511999990104', name: 'Elisa Rocha', tags: ['vip'] } }),
  );
  await r.refused('AddContact', 'conflict', as({ params: { campaign }, body: { phone: '5511999990104' } }));
  await r.refused(
    'AddContact',
    'not_found',
    as({ params: { campaign: MISSING.campaign }, body: { phone: '5511999990105' } }),
  );
  await r.refused('AddContact', 'validation_error', as({ params: { campaign }, body: { phone: '12' } }));
  const csv = await readFile(CONTACTS_CSV);
  const upload = (fields: Record<string, string>, campaignId = campaign) =>
    as({
      params: { campaign: campaignId },
      form: { fields, file: { field: 'file', name: 'contacts.csv', content: csv } },
    });
  const { job } = await r.ok(
    'ImportContacts',
    upload({ phone_column: 'phone', name_column: 'name', email_column: 'email' }),
  );
  await r.refused('ImportContacts', 'not_found', upload({ phone_column: 'phone' }, MISSING.campaign));
  await r.refused(
    'ImportContacts',
    'validation_error',
    upload({ phone_column: 'phone', file_format: 'pdf' }),
  );
  await waitFor(async () => {
    const read = await r.call('ImportJob', as({ params: { campaign, job } }));
    return read.body.status === 'completed' ? true : null;
  });
  await r.ok('ImportJob', as({ params: { campaign, job } }));
  await r.refused('ImportJob', 'not_found', as({ params: { campaign, job: MISSING.job } }));
  await r.refused('ImportJob', 'validation_error', as({ params: { campaign, job }, ...stray }));
  await r.ok('Contacts', as({ params: { campaign }, query: { per_page: '10' } }));
  await r.refused('Contacts', 'not_found', as({ params: { campaign: MISSING.campaign } }));
  await r.refused('Contacts', 'validation_error', as({ params: { campaign }, query: { per_page: '1000' } }));
  await r.ok('Contact', as({ params: { campaign, contact } }));
  await r.refused('Contact', 'not_found', as({ params: { campaign, contact: MISSING.contact } }));
  await r.refused('Contact', 'validation_error', as({ params: { campaign, contact }, ...stray }));

  await r.ok('StartCampaign', as({ params: { campaign } }));
  await waitFor(async () => {
    const read = await r.call('Campaign', as({ params: { campaign } }));
    return read.body.status === 'finished' && read.body.stats.delivered === 4 ? true : null;
  });
  await r.ok('Campaign', as({ params: { campaign } }));
  await r.refused('Campaign', 'not_found', as({ params: { campaign: MISSING.campaign } }));
  await r.refused('Campaign', 'validation_error', as({ params: { campaign }, ...stray }));
  await r.ok('Campaigns', as({ query: { status: 'finished', per_page: '5' } }));
  await r.refused('Campaigns', 'validation_error', as({ query: { status: 'done' } }));

  // A second campaign through every other transition, then refused each from where it ends.
  const friday = await r.call('CreateCampaign', as({ body: { name: 'Black Friday', template } }));
  const second = { params: { campaign: friday.body.campaign } };
  await r.ok('UpdateCampaign', as({ ...second, body: { description: 'Friday only', batch_size: 500 } }));
  await r.refused('UpdateCampaign', 'not_found', as({ params: { campaign: MISSING.campaign }, body: {} }));
  await r.refused('UpdateCampaign', 'validation_error', as({ ...second, body: { delay: -1 } }));
  await r.ok('UnscheduleCampaign', as(second));
  await r.ok('ScheduleCampaign', as(second));
  await r.ok('CancelCampaign', as(second));
  for (const action of ['Start', 'Pause', 'Resume', 'Cancel', 'Schedule', 'Unschedule']) {
    const operationId = `${action}Campaign`;
    await r.refused(operationId, 'invalid_state', as(second));
    await r.refused(operationId, 'not_found', as({ params: { campaign: MISSING.campaign } }));
    await r.refused(operationId, 'validation_error', as({ ...second, ...stray }));
  }
  // A slow campaign (one contact per batch, an hour apart) is still running when it is paused.
  const slow = await r.call(
    'CreateCampaign',
    as({ body: { name: 'Reminders', template, batch_size: 1, delay: 3600 } }),
  );
  const third = { params: { campaign: slow.body.campaign } };
  for (const phone of ['5511999990106', '5511999990107'])
    await r.call('AddContact', as({ ...third, body: { phone } }));
  await r.call('StartCampaign', as(third));
  // Paused once its first batch is delivered, so that the example's stats are the same in every run.
  await waitFor(async () => {
    const read = await r.call('Campaign', as(third));
    return read.body.stats.delivered === 1 ? true : null;
  });
  await r.ok('PauseCampaign', as(third));
  await r.ok('ResumeCampaign', as(third));
  await r.ok('DeleteCampaign', as(third));
  await r.refused('DeleteCampaign', 'not_found', as({ params: { campaign: MISSING.campaign } }));
  await r.refused('DeleteCampaign', 'validation_error', as({ params: { campaign }, ...stray }));
  await recordVerifications(t, r, { as, stray, account: ana.account });
}

/** A one-time code: its start, a check (the code itself is never seen here), a read. */
async function recordVerifications(
  t: TestTern,
  r: Recorder,
  { as, stray, account }: { as: (extra?: Call) => Call; stray: Call; account: string },
) {
  const otp = await r.call(
    'CreateTemplate',
    as({ body: { name: 'Login code', content: 'Your Acme login code is {{code}}' } }),
  );
  const { verification } = await r.ok(
    'StartVerification',
    as({ body: { to: '+5511999990130', template: otp.body.template, code_length: 6, ttl: 600 } }),
  );
  await r.refused(
    'StartVerification',
    'validation_error',
    as({ body: { to: '5511999990131', code_length: 3, ttl: 30 } }),
  );
  await t.tern.services.accountQuotas.setLimits(account, { dailySegments: 1 });
  await r.refused('StartVerification', 'quota_exceeded', as({ body: { to: '5511999990132' } }));
  await t.tern.services.accountQuotas.setLimits(account, { dailySegments: null });
  await r.ok('CheckVerification', as({ params: { verification }, body: { code: '000000' } }));
  await r.refused(
    'CheckVerification',
    'not_found',
    as({ params: { verification: MISSING.verification }, body: { code: '123456' } }),
  );
  await r.refused(
    'CheckVerification',
    'validation_error',
    as({ params: { verification }, body: { code: '12' } }),
  );
  await r.ok('Verification', as({ params: { verification } }));
  await r.refused('Verification', 'not_found', as({ params: { verification: MISSING.verification } }));
  await r.refused('Verification', 'validation_error', as({ params: { verification }, ...stray }));
  const now = t.clock.now().getTime();
  await r.ok(
    'VerificationStats',
    as({
      query: { from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 60_000).toISOString() },
    }),
  );
  await r.refused(
    'VerificationStats',
    'validation_error',
    as({ query: { from: '2025-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' } }),
  );
}

/** The failures of the service itself, each from a Tern put in that state. */
async function recordServiceFailures(r: Recorder) {
  const body = { to: '5511999990105', message: 'Your order has shipped' };

  // A budget of one request per window.
  const limited = await startTern({ role: 'api', env: { RATE_LIMIT_MAX: '1' } });
  try {
    const account = await limited.createAccount();
    const recorder = new Recorder(limited);
    await recorder.call('Settings', { token: account.token });
    await recorder.refused('Settings', 'rate_limited', { token: account.token });
    r.shared.rate_limited ??= recorder.shared.rate_limited;
  } finally {
    await limited.stop();
  }

  // A table gone from under Tern: an unexpected failure.
  const broken = await startTern({ role: 'api' });
  try {
    const account = await broken.createAccount();
    await sql(broken.database.url, 'ALTER TABLE account_settings RENAME TO settings_gone');
    const recorder = new Recorder(broken);
    await recorder.refused('Settings', 'internal_error', { token: account.token });
    r.shared.internal_error ??= recorder.shared.internal_error;
  } finally {
    await broken.stop();
  }

  // PostgreSQL out of reach.
  const database = await createTestDatabase();
  const url = new URL(database.url);
  const relay = new DatabaseRelay(url.hostname, Number(url.port || 5432));
  await relay.open();
  url.host = `127.0.0.1:${relay.port}`;
  const cut = await startTern({ role: 'api', env: { DATABASE_URL: url.toString() } });
  try {
    const account = await cut.createAccount();
    await relay.cut();
    const recorder = new Recorder(cut);
    await recorder.refused('SendMessage', 'service_unavailable', { token: account.token, body });
    r.shared.service_unavailable ??= recorder.shared.service_unavailable;
  } finally {
    await relay.open(relay.port);
    await cut.stop();
    await relay.cut();
    await database.drop();
  }
}
