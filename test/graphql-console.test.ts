import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { pollUntil, sleep } from './support/tern-processes.js';

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

/** The console's editor text; Monaco draws spaces as no-break spaces. */
async function textOf(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).textContent()) ?? '').replaceAll('\u00a0', ' ');
}

// Monaco draws only the lines in view: tall enough for every example operation.
const TALL = { width: 1280, height: 2000 };

const HEADERS_EDITOR = '.monaco-editor[data-uri$="request-headers.json"]';

/** Fills in the Authorization header as a user would: the token replaces the whole header text. */
async function authorize(page: Page, token: string): Promise<void> {
  await expect
    .poll(() => textOf(page, HEADERS_EDITOR), { timeout: 10_000 })
    .toContain('"Authorization": "Bearer <token>"');
  await page.locator(HEADERS_EDITOR).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(JSON.stringify({ Authorization: `Bearer ${token}` }));
  // The editor closed each quote and brace as they were typed: what follows the cursor goes.
  await page.keyboard.press('Shift+End');
  await page.keyboard.press('Delete');
}

/** Runs one of the example operations: with several in the editor, the run button asks which. */
async function run(page: Page, operation: string): Promise<void> {
  await page.locator('.graphiql-execute-button').click();
  await page.getByRole('menuitem', { name: operation, exact: true }).click();
}

describe.skipIf(!hasChromium)('the GraphiQL console at /graphql', () => {
  it('opens offline on the example operations with the Authorization header, and runs a query', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage({ viewport: TALL });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${t.url}/graphql`);
    await expect
      .poll(() => textOf(page, '.graphiql-query-editor'), { timeout: 30_000 })
      .toContain('mutation Login {');
    const examples = await textOf(page, '.graphiql-query-editor');
    for (const operation of ['mutation SendMessage {', 'query Messages {', 'subscription MessageUpdates {'])
      expect(examples).toContain(operation);

    await authorize(page, account.token);
    await run(page, 'Messages');
    await expect
      .poll(() => textOf(page, '.graphiql-response'), { timeout: 15_000 })
      .toContain('"__typename": "MessagePage"');
    expect(await textOf(page, '.graphiql-response')).toContain('"total": 0');

    expect(requested.length).toBeGreaterThan(1);
    expect(requested.filter((url) => !isLocal(url))).toEqual([]);
  });

  it('runs the example subscription out of the box and shows a message sent meanwhile', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage({ viewport: TALL });
    await page.goto(`${t.url}/graphql`);
    await expect
      .poll(() => textOf(page, '.graphiql-query-editor'), { timeout: 30_000 })
      .toContain('subscription MessageUpdates {');
    await authorize(page, account.token);
    await run(page, 'MessageUpdates');

    // Sent until the console's stream shows it: the first may go out before the stream is open.
    const shown = await pollUntil(
      'the console to show a message sent while it subscribes',
      async () => {
        const sent = await t.request('POST', '/v1/messages/send', {
          token: account.token,
          body: { to: '5511999990000', message: 'Seen live in the console' },
        });
        expect(sent.status, JSON.stringify(sent.body)).toBe(202);
        // Looked for as soon as it shows, for a second, before another is sent.
        for (let look = 0; look < 10; look += 1) {
          const response = await textOf(page, '.graphiql-response');
          if (response.includes(sent.body.message)) return response;
          await sleep(100);
        }
        return undefined;
      },
      { timeoutMs: 20_000, describe: () => textOf(page, '.graphiql-response') },
    );
    expect(shown).toContain('"kind": "status"');
    expect(shown).toContain('"status": "queued"');
  });
});
