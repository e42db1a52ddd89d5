import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../src/rest/route-table.js';
import { startTern, type TestTern } from './support/tern.js';

let t: TestTern;

beforeAll(async () => {
  t = await startTern();
});
afterAll(() => t.stop());

/** The JSON of the response sample an operation shows for `status` (the first tab is its success). */
async function responseSample(operation: Locator, status: string): Promise<any> {
  const samples = operation.locator('h3', { hasText: 'Response samples' }).locator('xpath=..');
  await samples.getByRole('tab', { name: status, exact: true }).click();
  const text = await samples
    .locator('[role="tabpanel"][aria-hidden="false"], [role="tabpanel"]:visible')
    .first()
    .innerText();
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
}

async function requestSample(operation: Locator): Promise<any> {
  const samples = operation.locator('h3', { hasText: 'Request samples' }).locator('xpath=..');
  const text = await samples.innerText();
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
}

async function withPage(
  run: (page: Page, seen: { elsewhere: string[]; failed: string[]; refused: string[] }) => Promise<void>,
) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage();
    const host = new URL(t.url).host;
    const seen = { elsewhere: [] as string[], failed: [] as string[], refused: [] as string[] };
    // No network but this host: anything else is recorded and refused.
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.protocol === 'blob:' || url.protocol === 'data:' || url.host === host) return route.continue();
      seen.elsewhere.push(url.href);
      return route.abort('internetdisconnected');
    });
    page.on('response', (response) => {
      if (response.status() >= 400) seen.failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => seen.failed.push(`failed ${request.url()}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Failed to load/i.test(message.text())) seen.refused.push(message.text());
    });
    await run(page, seen);
  } finally {
    await browser.close();
  }
}

describe('GET /docs', () => {
  it('renders the /v1 reference from this host alone: nothing asked elsewhere, nothing missing', {
    timeout: 60_000,
  }, async () => {
    await withPage(async (page, seen) => {
      const response = await page.goto(`${t.url}/docs`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
      await page.getByText('Tern SMS gateway').first().waitFor({ state: 'attached', timeout: 30_000 });
      await page.locator('[id="operation/SendMessage"]').waitFor({ state: 'attached', timeout: 30_000 });
      // The sidebar's footer (its logo came from Redocly's CDN) is there, and has been given time to load.
      await page.getByText('API docs by Redocly').waitFor({ state: 'attached' });
      await page.waitForLoadState('networkidle');
      expect(seen.elsewhere).toEqual([]);
      // Not even refused by the page's policy: the page never asks (a favicon included).
      expect(seen.refused).toEqual([]);
      expect(seen.failed).toEqual([]);
    });
  });

  it('lists each operation by method and path, with an overview of what holds for every route', {
    timeout: 60_000,
  }, async () => {
    await withPage(async (page) => {
      await page.goto(`${t.url}/docs`);
      await page.locator('[id="operation/SendMessage"]').waitFor({ state: 'attached', timeout: 30_000 });
      const entries = await page.locator('[role="menuitem"] label').allInnerTexts();
      const verb = { GET: 'get', POST: 'post', PATCH: 'patch', DELETE: 'del' } as const;
      const expected = routes.map(
        (route) => `${verb[route.method]}${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`,
      );
      expect(entries.filter((entry) => entry.includes('/v1/')).map((entry) => entry.trim())).toEqual(
        expect.arrayContaining(expected),
      );
      for (const heading of [
        'First request',
        'Test numbers',
        'Authentication',
        'Errors',
        'Paging',
        'Idempotency',
        'Rate limits',
      ])
        expect(entries).toContain(heading);
      const first = await page.locator('[id="section/First-request"]').locator('xpath=..').innerText();
      expect(first).toContain('curl -s http://localhost:3000/v1/auth/login');
      expect(first).toContain('/v1/messages/send');
      const numbers = await page.locator('[id="section/Test-numbers"]').locator('xpath=..').innerText();
      expect(numbers).toMatch(/0001\s+failed, with error\.code unreachable/);
      expect(numbers).toMatch(/0002\s+delivered, then a reply/);
      const overview = await page.locator('[id="section/Errors"]').locator('xpath=..').innerText();
      for (const code of ['validation_error', 'rate_limited', 'invalid_e164', 'unknown_field', 'opted_out'])
        expect(overview).toContain(code);
      const send = page.locator('[id="operation/SendMessage"]');
      expect(await send.innerText()).toMatch(/Idempotency-Key[\s\S]*\[ 1 \.\. 255 \] characters/);
      await send.getByRole('button', { name: /^429/ }).click();
      const limited = await send.innerText();
      for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'])
        expect(limited).toContain(header);
    });
  });

  it('shows answers of a real Tern: an id and queued for a send, a real token, details in a 422', {
    timeout: 60_000,
  }, async () => {
    await withPage(async (page) => {
      await page.goto(`${t.url}/docs`);
      const send = page.locator('[id="operation/SendMessage"]');
      await send.waitFor({ state: 'attached', timeout: 30_000 });
      await send.scrollIntoViewIfNeeded();
      const accepted = await responseSample(send, '202');
      expect(accepted).toEqual({
        message: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        // The example account's default sender, which the answer shows since senders are chosen at acceptance.
        from: expect.any(String),
        status: 'queued',
        to: expect.stringMatching(/^\d{7,15}$/),
        request: expect.stringMatching(/^req_/),
      });
      expect(await requestSample(send)).toEqual({ to: accepted.to, message: expect.any(String) });
      const refused = await responseSample(send, '422');
      expect(refused.error.code).toBe('validation_error');
      expect(refused.error.details.length).toBeGreaterThan(0);

      const login = page.locator('[id="operation/Login"]');
      await login.scrollIntoViewIfNeeded();
      const token = await responseSample(login, '200');
      expect(token).toMatchObject({
        token: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
        token_type: 'Bearer',
        expires_in: 86_400,
      });
    });
  });
});

describe("the reference's first request", () => {
  it('runs as written in bash against a live Tern: login, a send to a test number, the message read back', {
    timeout: 60_000,
  }, async () => {
    const document = await (await fetch(`${t.url}/v1/openapi.json`)).json();
    const sample = /## First request[\s\S]*?```sh\n([\s\S]*?)```/.exec(document.info.description)?.[1];
    expect(sample).toBeDefined();
    await t.createAccount('ops@example.com', 'a long password');
    const { stdout } = await promisify(execFile)(
      'bash',
      ['-c', `set -euo pipefail\n${sample!.replaceAll('http://localhost:3000', t.url)}`],
      { timeout: 30_000 },
    );
    const message = JSON.parse(stdout);
    expect(message).toMatchObject({
      message: expect.stringMatching(/^msg_/),
      to: expect.stringMatching(/0002$/),
      text: 'Hello from curl',
    });
  });
});
