import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CarrierCatalog } from '../src/carriers/carrier-catalog.js';
import { signatureOf } from '../src/carriers/routing/pooled-carrier.js';
import { AppError } from '../src/errors.js';
import {
  FakeGeneric,
  GENERIC_TEMPLATE,
  GENERIC_TOKEN,
  KANNEL_TEMPLATE,
} from './support/fake-providers/fake-generic.js';
import { FakeVonage } from './support/fake-providers/vonage.js';
import { messageReader } from './support/message-reader.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliCommand } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// HTTP carriers as the operator adds them (URLs, secrets, templates, PUBLIC_URL), and the generic
// template against a loopback provider: a send, its report called back on the secret path, and
// the outcome rules.

const PUBLIC_URL = 'https://tern.example.com';

let fake: FakeGeneric;
let t: TestTern;
let alice: TestAccount;
const { message } = messageReader(() => ({ tern: t, account: alice }));
let callbackUrl: string;

beforeAll(async () => {
  fake = await FakeGeneric.start();
  t = await startTern({ env: { PUBLIC_URL } });
  alice = await t.createAccount();
  const catalog = t.tern.services.carrierCatalog;
  const added = await catalog.addCarrier('gen', {
    url: fake.url(),
    template: JSON.stringify(GENERIC_TEMPLATE),
  });
  callbackUrl = catalog.describe(added).callbackUrl!;
  await catalog.addCarrier('backup', { url: 'simulator://?delay_ms=10' });
  await catalog.addRoute('4477', null, { carriers: 'gen,backup' });
  await catalog.addCarrier('kannel', { url: fake.url(), template: JSON.stringify(KANNEL_TEMPLATE) });
  await catalog.addRoute('4478', null, { carriers: 'kannel' });
  await t.tern.services.carrierDirectory.refresh();
  await waitFor(async () =>
    t.tern.carriers!.health().some((entry) => entry.carrier === 'gen' && entry.state === 'ready')
      ? true
      : null,
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

async function send(to: string, text = 'Hello "generic"\nprovider'): Promise<string> {
  const response = await t.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: text },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

function settled(id: string, wanted: (body: any) => boolean) {
  return waitFor(async () => {
    const body = await message(id);
    return wanted(body) ? body : null;
  });
}

function report(path: string, body: Record<string, string>) {
  return t.request('POST', path, { body });
}

async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('not refused');
}

describe('adding HTTP carriers', () => {
  it('keeps the secret sealed and out of what it shows, and gives a callback URL with a secret of its own', async () => {
    const { carriers } = await t.tern.services.carrierCatalog.settings();
    const gen = carriers.find((carrier) => carrier.name === 'gen')!;
    expect(gen.url).not.toContain(GENERIC_TOKEN);
    expect(gen.password).toBe(GENERIC_TOKEN);
    const row = await t.tern.deps.prisma.carrier.findUniqueOrThrow({ where: { name: 'gen' } });
    expect(JSON.stringify(row)).not.toContain(GENERIC_TOKEN);
    expect(JSON.stringify(row)).not.toContain(gen.callbackSecret);
    expect(callbackUrl).toBe(`${PUBLIC_URL}/carriers/gen/events/${gen.callbackSecret}`);
    expect(gen.callbackSecret!.length).toBeGreaterThanOrEqual(32);
  });

  it('refuses an HTTP carrier without PUBLIC_URL, naming it', async () => {
    const catalog = new CarrierCatalog(t.tern.deps.prisma, t.tern.deps.config.carrierSecretKey, null);
    const twilio = `twilio://AC${'a'.repeat(32)}:token@api.twilio.com?from=%2B15550001111`;
    expect(await refusal(() => catalog.addCarrier('tw', { url: twilio }))).toMatch(
      /^validation_error: PUBLIC_URL is not set/,
    );
  });

  it('stops a start without PUBLIC_URL once an HTTP carrier exists, and refuses a PUBLIC_URL with a query', async () => {
    await expect(startTern({ sharing: t })).rejects.toThrow(
      /PUBLIC_URL is not set, and the HTTP carriers gen, kannel/,
    );
    await expect(
      startTern({ sharing: t, env: { PUBLIC_URL: 'https://tern.example.com/?a=1' } }),
    ).rejects.toThrow(/PUBLIC_URL/);
  });

  it.each([
    ['no template', undefined, /--template FILE is required/],
    ['not JSON', '{', /invalid --template: not JSON/],
    ['an unknown key', JSON.stringify({ ...GENERIC_TEMPLATE, extra: 1 }), /invalid --template: .*extra/],
    [
      'an unknown placeholder',
      JSON.stringify({
        ...GENERIC_TEMPLATE,
        request: { ...GENERIC_TEMPLATE.request, url: '/send?to={number}' },
      }),
      /unknown placeholder \{number\}/,
    ],
    [
      'a bad regex',
      JSON.stringify({ ...GENERIC_TEMPLATE, answer: { id: { regex: '(' } } }),
      /invalid --template: answer.id/,
    ],
    ['too large', JSON.stringify({ ...GENERIC_TEMPLATE, pad: 'x'.repeat(20_000) }), /over 16384 bytes/],
  ])('refuses a template with %s', async (_case, template, reason) => {
    const input = { url: fake.url(), ...(template === undefined ? {} : { template }) };
    expect(await refusal(() => t.tern.services.carrierCatalog.addCarrier('bad', input))).toMatch(reason);
  });

  it('refuses a template for a provider that takes none, and a bad Twilio URL', async () => {
    const catalog = t.tern.services.carrierCatalog;
    const twilio = `twilio://AC${'a'.repeat(32)}:token@api.twilio.com`;
    expect(
      await refusal(() =>
        catalog.addCarrier('bad', { url: `${twilio}?from=%2B15550001111`, template: '{}' }),
      ),
    ).toMatch(/only an http:\/\/ or https:\/\/ carrier takes a template/);
    expect(await refusal(() => catalog.addCarrier('bad', { url: twilio }))).toMatch(
      /from= or messaging_service=/,
    );
    expect(
      await refusal(() => catalog.addCarrier('bad', { url: 'twilio://nope:token@api.twilio.com?from=1' })),
    ).toMatch(/account SID/);
  });
});

describe('carriers add from the CLI', () => {
  const cliEnv = (extra: Record<string, string>) => ({
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
    ...extra,
  });

  it('adds a generic carrier with --template FILE and lists it without its secret, and refuses without PUBLIC_URL', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tern-template-')), 'provider.json');
    writeFileSync(file, JSON.stringify(GENERIC_TEMPLATE));
    const args = ['carriers', 'add', 'cli-gen', '--url', fake.url(), '--template', file];
    const refused = await runCliCommand(args, cliEnv({}));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PUBLIC_URL');
    const added = await runCliCommand(args, cliEnv({ PUBLIC_URL }));
    expect(added.code, added.stderr).toBe(0);
    const line = JSON.parse(added.stdout.trim());
    expect(line).toMatchObject({
      carrier: 'cli-gen',
      kind: 'http',
      binds: null,
      binds_open: null,
      url: `http://acme@${new URL(fake.url()).host}/`,
      callback_url: expect.stringMatching(
        /^https:\/\/tern\.example\.com\/carriers\/cli-gen\/events\/[A-Za-z0-9_-]{32}$/,
      ),
    });
    expect(added.stdout).not.toContain(GENERIC_TOKEN);
    const badFile = `${file}.bad`;
    writeFileSync(badFile, '{"request": {}}');
    const bad = await runCliCommand(
      ['carriers', 'update', 'cli-gen', '--template', badFile],
      cliEnv({ PUBLIC_URL }),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/invalid --template: request.method/);
    await t.tern.services.carrierCatalog.removeCarrier('cli-gen');
  });
});

describe("Vonage's signature secret", () => {
  const API_SECRET = 'vonage-api-secret-4242';
  const SIGNATURE_SECRET = 'vonage-signature-secret-0123456789';
  let vonage: FakeVonage;
  let host: string;

  beforeAll(async () => {
    vonage = await FakeVonage.start({
      apiKey: 'abcd1234',
      apiSecret: API_SECRET,
      signatureSecret: SIGNATURE_SECRET,
    });
    host = new URL(vonage.url).host;
  });

  afterAll(async () => {
    await vonage?.close();
  });

  const vonageUrl = (signatureSecret: string) =>
    `vonage://abcd1234:${API_SECRET}@${host}?tls=false&from=ACME&signature_secret=${signatureSecret}`;
  const cliEnv = () => ({
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
    PUBLIC_URL,
  });

  async function callback(params: Record<string, string>, secret?: string): Promise<number> {
    return vonage.sendSigned(`${t.url}/carriers/vg/events`, params, {
      form: 'query',
      ...(secret === undefined ? {} : { secret }),
    });
  }

  it('is sealed with the API secret: neither carriers list nor the row shows it, and callbacks signed with it are verified', async () => {
    const added = await runCliCommand(
      ['carriers', 'add', 'vg', '--url', vonageUrl(SIGNATURE_SECRET)],
      cliEnv(),
    );
    expect(added.code, added.stderr).toBe(0);
    const listed = await runCliCommand(['carriers', 'list'], cliEnv());
    expect(listed.code, listed.stderr).toBe(0);
    for (const output of [added.stdout, listed.stdout, added.stderr, listed.stderr]) {
      expect(output).not.toContain(SIGNATURE_SECRET);
      expect(output).not.toContain(API_SECRET);
    }
    const line = listed.stdout.split('\n').find((text) => text.includes('"carrier":"vg"'))!;
    expect(JSON.parse(line).url).toBe(`vonage://abcd1234@${host}?tls=false&from=ACME`);
    const row = await t.tern.deps.prisma.carrier.findUniqueOrThrow({ where: { name: 'vg' } });
    expect(JSON.stringify(row)).not.toContain(SIGNATURE_SECRET);
    expect(row.secretOptionsSealed).toMatch(/^v1\./);

    const catalog = t.tern.services.carrierCatalog;
    await catalog.addRoute('4479', null, { carriers: 'vg' });
    await t.tern.services.carrierDirectory.refresh();
    const id = await send('+447900900001');
    await settled(id, (body) => body.status === 'sent');
    const { carrierMessageId } = await t.tern.deps.prisma.message.findFirstOrThrow({ where: { id } });
    const receipt = vonage.receipt(carrierMessageId!, { status: 'delivered', clientRef: id });
    expect(await callback(receipt, 'a-forger-s-secret')).toBe(401);
    expect(await callback(receipt)).toBe(200);
    await settled(id, (body) => body.status === 'delivered');
  });

  it('is replaced by carriers update with a new URL, which restarts the carrier with it', async () => {
    const catalog = t.tern.services.carrierCatalog;
    const before = await catalog.carrier('vg');
    const renewed = 'renewed-signature-secret-9876543210';
    const updated = await runCliCommand(['carriers', 'update', 'vg', '--url', vonageUrl(renewed)], cliEnv());
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).not.toContain(renewed);
    const after = await catalog.carrier('vg');
    expect(after.url).toBe(before.url);
    expect(after.secretOptions).toEqual({ signature_secret: renewed });
    expect(signatureOf(after)).not.toBe(signatureOf(before));
    await t.tern.services.carrierDirectory.refresh();
    const receipt = vonage.receipt('0B0000FF', { status: 'delivered' });
    expect(await callback(receipt)).toBe(401);
    expect(await callback(receipt, renewed)).toBe(200);
  });

  it('is sealed at start when a row written before kept it in its URL, and read from there meanwhile', async () => {
    const catalog = t.tern.services.carrierCatalog;
    const { prisma } = t.tern.deps;
    await prisma.carrier.update({
      where: { name: 'vg' },
      data: {
        url: `vonage://abcd1234@${host}?tls=false&from=ACME&signature_secret=old-signature-secret-5555`,
        secretOptionsSealed: null,
      },
    });
    const meanwhile = await catalog.carrier('vg');
    expect(meanwhile.url).toBe(`vonage://abcd1234@${host}?tls=false&from=ACME`);
    expect(meanwhile.secretOptions).toEqual({ signature_secret: 'old-signature-secret-5555' });
    await catalog.sealSecretOptionsLeftInUrls();
    const row = await prisma.carrier.findUniqueOrThrow({ where: { name: 'vg' } });
    expect(row.url).toBe(meanwhile.url);
    expect(JSON.stringify(row)).not.toContain('old-signature-secret-5555');
    expect((await catalog.carrier('vg')).secretOptions).toEqual({
      signature_secret: 'old-signature-secret-5555',
    });
    await catalog.removeRoute((await prisma.route.findFirstOrThrow({ where: { prefix: '4479' } })).id);
    await catalog.removeCarrier('vg');
  });
});

describe('the generic template', () => {
  it('sends as the template says and applies the report called back on the secret path', async () => {
    const id = await send('+447700900001');
    await settled(id, (body) => body.status === 'sent');
    const sent = fake.message('+447700900001')!;
    expect(sent.body).toEqual({
      to: '+447700900001',
      from: '',
      text: 'Hello "generic"\nprovider',
      client_ref: id,
      report_url: callbackUrl,
    });
    const path = callbackUrl.slice(PUBLIC_URL.length);
    const delivered = { message_id: sent.id, status: 'DELIVRD', client_ref: id };
    expect((await report('/carriers/gen/events', delivered)).status).toBe(401);
    expect((await report('/carriers/gen/events/not-the-secret-at-all-0123456789ab', delivered)).status).toBe(
      401,
    );
    expect((await message(id)).status).toBe('sent');
    expect((await report(path, { message_id: sent.id, status: 'ENROUTE' })).status).toBe(200);
    expect((await report(path, delivered)).status).toBe(200);
    await settled(id, (body) => body.status === 'delivered');
    expect((await report(path, { ...delivered, status: 'UNDELIV' })).status).toBe(200);
    expect((await message(id)).status).toBe('delivered');
  });

  it('fails the message with the provider code of a 4xx or of a refusal answered 200, without failover', async () => {
    fake.answerNext(
      { kind: 'answer', status: 400, body: { error: { code: 'INVALID_NUMBER', message: 'bad number' } } },
      { kind: 'answer', status: 200, body: { status: 'REJECTED', error: { code: 'BLOCKED' } } },
    );
    const first = await send('+447700900002');
    expect(await settled(first, (body) => body.status === 'failed')).toMatchObject({
      error: { code: 'carrier_INVALID_NUMBER' },
    });
    const second = await send('+447700900003');
    expect(await settled(second, (body) => body.status === 'failed')).toMatchObject({
      error: { code: 'carrier_BLOCKED' },
    });
  });

  it('gives the message to the next carrier on a 503', async () => {
    fake.answerNext({ kind: 'answer', status: 503, body: { error: { code: 'BUSY' } } });
    const id = await send('+447700900004');
    expect((await settled(id, (body) => body.carrier && body.status !== 'queued')).carrier).toBe('backup');
  });

  it('speaks to a Kannel-style interface: GET with the text in the query, a report by GET with our reference', async () => {
    const id = await send('+447800900001', 'Ça va? 100% & more');
    await settled(id, (body) => body.status === 'sent');
    const query = fake.kannel.find((entry) => entry.get('to') === '+447800900001')!;
    expect(query.get('text')).toBe('Ça va? 100% & more');
    expect(query.get('username')).toBe('acme');
    const dlrUrl = query.get('dlr-url')!;
    const { carriers } = await t.tern.services.carrierCatalog.settings();
    const secret = carriers.find((carrier) => carrier.name === 'kannel')!.callbackSecret;
    expect(dlrUrl).toBe(`${PUBLIC_URL}/carriers/kannel/events/${secret}?ref=${id}&type=%d`);
    // Kannel fills in %d (1: delivered) and calls the URL.
    const report = await t.request('GET', dlrUrl.replace('%d', '1').slice(PUBLIC_URL.length));
    expect(report.status).toBe(200);
    await settled(id, (body) => body.status === 'delivered');
  });
});

describe('refused callbacks', () => {
  // Last in the file: it uses up the loopback address's budget of refusals for a minute.
  it('answers 429 to an address past 60 refused calls a minute, and still takes its verified calls', async () => {
    // Earlier tests of this file made a few refused calls of the same minute already.
    const statuses: number[] = [];
    while (statuses.length <= 60 && statuses.at(-1) !== 429)
      statuses.push(
        (await t.request('POST', '/carriers/gen/events/wrong', { body: { status: 'DELIVRD' } })).status,
      );
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true);
    expect(statuses.length).toBeGreaterThan(50);
    const refused = await t.request('POST', '/carriers/gen/events/wrong', { body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A carrier this process does not know would cost a PostgreSQL read to look up: past the
    // budget, the call is refused before it.
    // Counted by name: the instance's workers use the pool meanwhile.
    const catalog = t.tern.services.carrierCatalog;
    const lookUp = catalog.carrier.bind(catalog);
    const lookedUp: string[] = [];
    catalog.carrier = (name: string) => {
      lookedUp.push(name);
      return lookUp(name);
    };
    try {
      const unknown = await t.request('POST', '/carriers/no-such-carrier/events', { body: {} });
      expect(unknown.status).toBe(429);
    } finally {
      catalog.carrier = lookUp;
    }
    expect(lookedUp).not.toContain('no-such-carrier');
    // A provider may call from an address a forger used (any Twilio customer can aim a callback
    // here): its signed call is still taken, and applied.
    const id = await send('+447800900002', 'after the forger');
    await settled(id, (body) => body.status === 'sent');
    const query = fake.kannel.find((entry) => entry.get('to') === '+447800900002')!;
    const report = await t.request('GET', query.get('dlr-url')!.replace('%d', '1').slice(PUBLIC_URL.length));
    expect(report.status).toBe(200);
    await settled(id, (body) => body.status === 'delivered');
  });
});
