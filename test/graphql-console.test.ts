import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

/**
 * The GraphiQL console in a real browser with no way out of the machine: every request that is
 * not to loopback goes to a proxy that is not there, and each one is recorded.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`graphql-console.test.ts skipped: no Chromium at ${CHROMIUM}`);

let t: TestTern;
let account: TestAccount;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium) return;
  [t, browser] = await Promise.all([
    startTern({ role: 'api' }),
    chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--proxy-server=127.0.0.1:9'],
    }),
  ]);
  account = await t.createAccount();
});
afterAll(async () => {
  await Promise.all([browser?.close(), t?.stop()]);
});

function isLocal(url: string): boolean {
  if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return true;
  const { hostname } = new URL(url);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

describe.skipIf(!hasChromium)('the GraphiQL console at /graphql', () => {
  it('opens offline on the example operations with the Authorization header, and runs a query', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${t.url}/graphql`);
    const textOf = async (selector: string) =>
      // Monaco draws spaces as no-break spaces.
      ((await page.locator(selector).textContent()) ?? '').replaceAll('\u00a0', ' ');
    await expect
      .poll(() => textOf('.graphiql-query-editor'), { timeout: 30_000 })
      .toContain('mutation Login {');
    const examples = await textOf('.graphiql-query-editor');
    for (const operation of ['mutation SendMessage {', 'query Messages {'])
      expect(examples).toContain(operation);
    const headersEditor = '.monaco-editor[data-uri$="request-headers.json"]';
    await expect
      .poll(() => textOf(headersEditor), { timeout: 10_000 })
      .toContain('"Authorization": "Bearer <token>"');

    // The header filled in as a user would: the token replaces the whole header text.
    await page.locator(headersEditor).click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(JSON.stringify({ Authorization: `Bearer ${account.token}` }));
    // The editor closed each quote and brace as they were typed: what follows the cursor goes.
    await page.keyboard.press('Shift+End');
    await page.keyboard.press('Delete');
    // With several operations in the editor, the run button asks which one.
    await page.locator('.graphiql-execute-button').click();
    await page.getByRole('menuitem', { name: 'Messages' }).click();
    await expect
      .poll(() => textOf('.graphiql-response'), { timeout: 15_000 })
      .toContain('"__typename": "MessagePage"');
    expect(await textOf('.graphiql-response')).toContain('"total": 0');

    expect(requested.length).toBeGreaterThan(1);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });
});
