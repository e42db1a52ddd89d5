import { existsSync } from 'node:fs';
import { type TOTP, URI } from 'otpauth';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAUD_RULES } from '../src/errors.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

/**
 * The dashboard in a real browser with no way out of the machine: every request that is not to
 * loopback goes to a proxy that is not there, and each one is recorded.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`dashboard.test.ts skipped: no Chromium at ${CHROMIUM}`);

let t: TestTern;
let account: TestAccount;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  [t, browser] = await Promise.all([
    startTern({ env: { SIMULATOR_DELAY_MS: '300' } }),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--proxy-server=127.0.0.1:9'] }),
  ]);
  account = await t.createAccount();
});
afterAll(async () => {
  await Promise.all([browser?.close(), t?.stop()]);
});

function isLocal(url: string): boolean {
  if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return true;
  return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
}

async function send(to: string, body: Record<string, unknown> = {}, from = account): Promise<string> {
  const sent = await t.request('POST', '/v1/messages/send', {
    token: from.token,
    body: { to, message: 'Hi', ...body },
  });
  expect(sent.status).toBe(202);
  return sent.body.message;
}

async function deliveredAll(ids: string[]) {
  await waitFor(async () => {
    const count = await t.tern.deps.prisma.message.count({
      where: { id: { in: ids }, status: { in: ['delivered', 'failed'] } },
    });
    return count === ids.length ? true : null;
  }, 20_000);
}

const total = (page: Page, term: string) => page.locator(`[data-total="${term}"] dd`).textContent();

async function signIn(page: Page, as = account) {
  await page.goto(`${t.url}/dashboard`);
  await page.getByRole('textbox', { name: 'E-mail' }).fill(as.email);
  await page.getByLabel('Password', { exact: true }).fill(as.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shown(page);
}

/** Waits for the signed-in page; on a timeout, says what the page shows instead. */
async function shown(page: Page) {
  try {
    await page.getByRole('heading', { name: 'Totals' }).waitFor({ timeout: 15_000 });
  } catch (error) {
    throw new Error(`${String(error)}\nthe page shows: ${await page.locator('body').innerText()}`);
  }
}

describe.skipIf(!hasChromium)('the dashboard at /dashboard', () => {
  it('signs in, shows the totals and the chart, and a message sent meanwhile turns delivered without a reload', {
    timeout: 90_000,
  }, async () => {
    const ids = await Promise.all(['351912340001', '351912340011', '447700900123'].map((to) => send(to)));
    await deliveredAll(ids);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    await signIn(page);
    expect(await total(page, 'Messages')).toBe('3');
    expect(await total(page, 'Delivered')).toBe('2');
    expect(await total(page, 'Failed')).toBe('1');
    expect(await total(page, 'Delivery rate')).toBe('66.7%');
    await expect.poll(() => page.locator('.chart canvas').count()).toBeGreaterThan(0);
    await expect
      .poll(() => page.getByRole('table', { name: 'Delivery rate by country' }).textContent())
      .toContain('PT');

    const id = await send('351912340022');
    const row = page.locator(`tr[data-message="${id}"]`);
    await row.waitFor({ timeout: 15_000 });
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain('delivered');
    await expect.poll(() => total(page, 'Messages'), { timeout: 15_000 }).toBe('4');

    expect(problems).toEqual([]);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
    // `npm run docs:dashboard` keeps the picture in docs/dashboard.md what the page looks like.
    if (process.env.TERN_WRITE_DASHBOARD_SCREENSHOT === 'true')
      await page.screenshot({ path: 'docs/dashboard.png', fullPage: true });
    await page.close();
  });

  it('asks for the two-factor code of an account that has two-factor login on', {
    timeout: 60_000,
  }, async () => {
    const guarded = await t.createAccount();
    const setUp = await t.request('POST', '/v1/settings/two-factor', { token: guarded.token });
    const totp = URI.parse(setUp.body.otpauth_url) as TOTP;
    const confirmed = await t.request('POST', '/v1/settings/two-factor/confirm', {
      token: guarded.token,
      body: { code: totp.generate({ timestamp: t.clock.now().getTime() }) },
    });
    expect(confirmed.status).toBe(200);
    const page = await browser.newPage();
    await page.goto(`${t.url}/dashboard`);
    await page.getByRole('textbox', { name: 'E-mail' }).fill(guarded.email);
    await page.getByLabel('Password', { exact: true }).fill(guarded.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const code = page.getByRole('textbox', { name: 'Two-factor code' });
    await code.waitFor({ timeout: 15_000 });
    // A recovery code stands for the authenticator's code, once.
    await code.fill(confirmed.body.recovery_codes[0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await shown(page);
    expect(await total(page, 'Messages')).toBe('0');
    await page.close();
  });

  it('signs in with an API key, and is readable at a phone width', { timeout: 60_000 }, async () => {
    const created = await t.request('POST', '/v1/api-keys', {
      token: account.token,
      body: { name: 'Dashboard' },
    });
    expect(created.status).toBe(201);
    // Rows in both rate tables, whichever tests ran before.
    await deliveredAll([await send('351912340006')]);
    const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await page.goto(`${t.url}/dashboard`);
    await page.getByRole('textbox', { name: 'API key' }).fill(created.body.key);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await shown(page);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    // Every column of the rate tables is in sight, the Rate column included, without scrolling.
    for (const name of ['Delivery rate by country', 'Delivery rate by carrier']) {
      const table = page.getByRole('table', { name });
      await expect.poll(() => table.locator('tbody tr').count()).toBeGreaterThan(0);
      const rate = await table.getByRole('columnheader', { name: 'Rate' }).boundingBox();
      const card = await page.getByRole('region', { name }).boundingBox();
      expect(rate).not.toBeNull();
      expect(rate!.x + rate!.width).toBeLessThanOrEqual(card!.x + card!.width);
      expect(rate!.x + rate!.width).toBeLessThanOrEqual(390);
    }
    // The latest messages' wider table scrolls inside its card instead.
    const latest = page.locator('.panel:has(#latest-title) .table-scroll');
    const scroller = await latest.evaluate((element) => ({
      overflow: getComputedStyle(element).overflowX,
      right: element.getBoundingClientRect().right,
    }));
    expect(scroller.overflow).toBe('auto');
    expect(scroller.right).toBeLessThanOrEqual(390);
    await page.close();
  });

  it('shows each of the latest messages with its time, recipient, text, status, carrier and error code', {
    timeout: 60_000,
  }, async () => {
    const own = await t.createAccount();
    const failed = await send(
      '351912340001',
      { message: 'Your parcel is waiting at the depot on Rua Augusta' },
      own,
    );
    await deliveredAll([failed]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, own);
    const row = page.locator(`tr[data-message="${failed}"]`);
    await row.waitFor({ timeout: 15_000 });
    const headers = await page.locator('.panel:has(#latest-title) thead th').allInnerTexts();
    expect(headers).toEqual(['Time', 'To', 'Text', 'Status', 'Carrier', 'Error']);
    const [time, to, text, status, carrier, error] = await row.locator('td').allInnerTexts();
    const created = await t.request('GET', `/v1/messages/${failed}`, { token: own.token });
    expect(await row.locator('time').getAttribute('datetime')).toBe(created.body.created_at);
    expect(time).toMatch(/\d/);
    expect(to).toBe('+351912340001');
    // A short text: the start of the message, cut with an ellipsis.
    expect(text).toMatch(/^Your parcel is waiting at the depot.*…$/);
    expect(text!.length).toBeLessThanOrEqual(40);
    expect(status).toBe('failed');
    expect(carrier).toBe('default');
    expect(error).toBe('unreachable');
    // No 36-character ids on show.
    expect(await row.innerText()).not.toContain(failed);
    await page.close();
  });

  it('draws 7 days by day as joined lines with a tick for each day, not lone dots at 12am and 12pm', {
    timeout: 60_000,
  }, async () => {
    const own = await t.createAccount();
    await deliveredAll([await send('351912340003', {}, own)]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, own);
    const chart = page.locator('.chart');
    await expect.poll(() => chart.getAttribute('data-ticks')).toBeTruthy();
    // One day has numbers; the API leaves the other days out, and the chart draws them as zeros.
    expect(await page.locator('details table tbody tr').count()).toBe(1);
    expect(Number(await chart.getAttribute('data-buckets'))).toBe(8);
    const ticks = (await chart.getAttribute('data-ticks'))!.split('|');
    expect(ticks).toHaveLength(8);
    expect(new Set(ticks).size).toBe(8);
    for (const tick of ticks) expect(tick).not.toMatch(/am|pm|:/i);
    await page.close();
  });

  it('counts no cancelled message among those not handed over yet', { timeout: 60_000 }, async () => {
    const own = await t.createAccount();
    const later = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const [waiting, cancelled] = await Promise.all([
      send('351912340004', { send_at: later }, own),
      send('351912340005', { send_at: later }, own),
    ]);
    expect(waiting).toMatch(/^msg_/);
    const cancel = await t.request('POST', `/v1/messages/${cancelled}/cancel`, { token: own.token });
    expect(cancel.status).toBe(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, own);
    const row = page.getByRole('table', { name: 'Delivery rate by carrier' }).getByRole('row', {
      name: /not handed over yet/,
    });
    await expect.poll(() => row.locator('td').first().innerText(), { timeout: 15_000 }).toBe('1');
    await page.close();
  });

  it('shows what the fraud guard refused, by rule and by country, and the country it blocks', {
    timeout: 60_000,
  }, async () => {
    const own = await t.createAccount();
    await t.tern.services.fraudGuard.setRules(own.account, {
      countryCaps: { BR: { hourly: 1, daily: null } },
    });
    await send('5511987650001', {}, own);
    const refused = await t.request('POST', '/v1/messages/send', {
      token: own.token,
      body: { to: '5511987650002', message: 'Hi' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field: 'to', issue: 'country_hourly' }]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, own);
    const byRule = page.getByRole('table', { name: 'Refusals by rule, the last 7 UTC days' });
    await expect
      .poll(() => byRule.locator('tbody').innerText(), { timeout: 15_000 })
      .toBe('country_hourly\t1\t0');
    const byCountry = page.getByRole('table', { name: 'Refusals by country, the last 7 UTC days' });
    expect(await byCountry.locator('tbody').innerText()).toBe('BR\t1\t0');
    const blocked = page.locator('[data-blocked="BR"]');
    const { blockedCountries } = (
      await t.graphql(
        '{ fraudDecisions { ... on FraudDecisions { blockedCountries { country until } } } }',
        {},
        own.token,
      )
    ).body.data.fraudDecisions;
    expect(blockedCountries).toEqual([{ country: 'BR', until: expect.any(String) }]);
    expect(await blocked.locator('time').getAttribute('datetime')).toBe(blockedCountries[0].until);
    expect(await blocked.innerText()).toMatch(/^BR until .*\d/);
    await page.close();
  });

  it('shows the fraud guard’s exact totals over a quarter of more rows than fraudDecisions answers', {
    timeout: 60_000,
  }, async () => {
    const own = await t.createAccount();
    const today = Date.parse(t.clock.now().toISOString().slice(0, 10));
    // 5,400 rows; each rule and each country weighs differently, so that the tables' order is known.
    const countries = ['BR', 'NG', 'ID', 'GB', ''];
    await t.tern.deps.prisma.fraudGuardCount.createMany({
      data: Array.from({ length: 90 }, (_, age) => age).flatMap((age) =>
        FRAUD_RULES.flatMap((rule, r) =>
          countries.flatMap((country, c) =>
            (['blocked', 'monitored'] as const).map((decision) => ({
              accountId: own.account,
              day: new Date(today - age * 86_400_000),
              rule,
              country,
              decision,
              count: (r + 1) * (c + 1) * (decision === 'monitored' ? 2 : 1),
            })),
          ),
        ),
      ),
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await signIn(page, own);
    await page.getByLabel('Range').selectOption('quarter');
    // Of the 90 days: each rule r is (r + 1) × (1 + … + 5) × 90 blocked, each country c (c + 1) × 21 × 90.
    const byRule = FRAUD_RULES.map((rule, r) => `${rule}\t${(r + 1) * 1350}\t${(r + 1) * 2700}`).reverse();
    const byCountry = ['unknown', 'GB', 'ID', 'NG', 'BR'].map(
      (country, i) => `${country}\t${(5 - i) * 1890}\t${(5 - i) * 3780}`,
    );
    const table = (name: string) => page.getByRole('table', { name }).locator('tbody');
    await expect
      .poll(() => table('Refusals by rule, the last 90 UTC days').innerText(), { timeout: 15_000 })
      .toBe(byRule.join('\n'));
    expect(await table('Refusals by country, the last 90 UTC days').innerText()).toBe(byCountry.join('\n'));
    await page.close();
  });

  it('shows a refused sign-in under the form that was used', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/dashboard`);
    const withPassword = page.locator('form[aria-labelledby="with-password"]');
    const withKey = page.locator('form[aria-labelledby="with-key"]');
    await page.getByRole('textbox', { name: 'E-mail' }).fill(account.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await withPassword.getByRole('alert').waitFor({ timeout: 15_000 });
    expect(await withKey.getByRole('alert').count()).toBe(0);

    await page.getByRole('textbox', { name: 'API key' }).fill('tern_live_not_a_key');
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.locator('form[aria-labelledby="with-key"] [role="alert"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('form[aria-labelledby="with-password"] [role="alert"]').count()).toBe(0);
    await page.close();
  });

  it('is served with a strict content security policy, and not at all with DASHBOARD=false', async () => {
    const response = await fetch(`${t.url}/dashboard`);
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe');
    const off = await startTern({ role: 'api', env: { DASHBOARD: 'false' } });
    try {
      expect((await fetch(`${off.url}/dashboard`)).status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});
