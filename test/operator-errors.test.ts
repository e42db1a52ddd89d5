import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { freePort, runCliCommand } from './support/tern-processes.js';

// What the operator and a tenant are told when something is refused: each message says what is
// wrong and what is allowed, and blames the one who can fix it.

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});

afterAll(async () => {
  await t?.stop();
});

const cli = (...args: string[]) =>
  runCliCommand(args, {
    DATABASE_URL: t.database.url,
    DIRECT_DATABASE_URL: t.database.directUrl,
    REDIS_PREFIX: t.redisPrefix,
    LOG_LEVEL: 'warn',
  });

describe('the CLI', () => {
  it('says what each option takes instead of a parser error or a bare issue', async () => {
    const limits = ['accounts', 'limits', '--email', alice.email];
    const [uk, negative, explainText, shortPassword] = await Promise.all([
      cli(...limits, '--countries', 'IE,UK'),
      cli(...limits, '--daily-segments', '-3'),
      cli('routes', 'explain', '--to', 'abc'),
      cli('accounts', 'create', '--email', 'short@example.com', '--password', 'seven77'),
    ]);
    for (const run of [uk, negative, explainText, shortPassword]) {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^tern: [^\n]+\n$/);
    }
    expect(uk.stderr).toContain('did you mean GB?');
    expect(negative.stderr).toContain('--daily-segments takes a whole number of segments or none');
    expect(negative.stderr).not.toContain('ambiguous');
    expect(explainText.stderr).toContain('--to takes a phone number');
    expect(shortPassword.stderr).toContain('password (too short: from 8 to 1024 characters)');
    const quota = await t.tern.deps.prisma.accountQuota.findUnique({ where: { accountId: alice.account } });
    expect(quota?.dailySegments ?? null).toBeNull();
    expect(quota?.allowedCountries ?? []).toEqual([]);
  }, 60_000);

  it('names every route that keeps a carrier from being removed', async () => {
    const catalog = t.tern.services.carrierCatalog;
    await catalog.addCarrier('spare', { url: 'simulator://' });
    const routes = await Promise.all(
      ['31', '32', '33', '34'].map((prefix) => catalog.addRoute(prefix, null, { carriers: 'default,spare' })),
    );
    const refused = await cli('carriers', 'remove', 'spare');
    expect(refused.code).toBe(1);
    for (const route of routes) expect(refused.stderr).toContain(`${route.id} (prefix ${route.prefix})`);
    expect(refused.stderr).toMatch(/^tern: 4 routes .* still name spare/);
    for (const route of routes) await catalog.removeRoute(route.id);
    await catalog.removeCarrier('spare');
  }, 60_000);
});

describe('a tenant', () => {
  it('learns that no route covers a destination, not that its request is wrong', async () => {
    const catalog = t.tern.services.carrierCatalog;
    const fallback = (await catalog.settings()).routes.find((route) => route.prefix === '*')!;
    await catalog.removeRoute(fallback.id);
    await t.tern.services.carrierDirectory.refresh();
    try {
      const refused = await t.request('POST', '/v1/messages/send', {
        token: alice.token,
        body: { to: '5511966661234', message: 'Nowhere' },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'no_route' }]);
      expect(refused.body.error.message).toMatch(/^No route covers this destination: the operator/);
      expect(refused.body.error.message).not.toContain('Invalid request');
    } finally {
      await catalog.addRoute('*', null, { carriers: 'default' });
      await t.tern.services.carrierDirectory.refresh();
    }
  });

  it('is told that a send_at needs its offset', async () => {
    const refused = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '447700900123', message: 'Later', send_at: '2026-12-01T09:00:00' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'send_at', issue: 'invalid_format' }]);
    expect(refused.body.error.message).toContain('needs its offset: Z or ±hh:mm');
  });
});

describe('a second process on a taken port', () => {
  it('fails before it starts workers or takes a bind', async () => {
    const port = String(await freePort());
    const first = await startTern({ sharing: t, env: { PORT: port } });
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    try {
      await expect(startTern({ sharing: t, env: { PORT: port }, logger })).rejects.toThrow(/EADDRINUSE/);
      expect(lines.join('')).not.toContain('workers started');
    } finally {
      await first.stop();
    }
  });
});
