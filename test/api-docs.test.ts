import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestTern } from './support/tern.js';

let t: TestTern;

beforeAll(async () => {
  t = await startTern();
});
afterAll(() => t.stop());

describe('GET /docs', () => {
  it('renders the /v1 reference from this host alone, with nothing fetched elsewhere', {
    timeout: 60_000,
  }, async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox'],
    });
    try {
      const page = await browser.newPage();
      const host = new URL(t.url).host;
      const elsewhere: string[] = [];
      const refusedByPolicy: string[] = [];
      // No network but this host: anything else is recorded and refused.
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.protocol === 'blob:' || url.protocol === 'data:' || url.host === host)
          return route.continue();
        elsewhere.push(url.href);
        return route.abort('internetdisconnected');
      });
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text());
      });
      const response = await page.goto(`${t.url}/docs`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
      await page.getByText('Tern SMS gateway').first().waitFor({ state: 'attached', timeout: 30_000 });
      await page
        .getByText('Send one SMS', { exact: false })
        .first()
        .waitFor({ state: 'attached', timeout: 30_000 });
      expect(elsewhere).toEqual([]);
      // The policy refuses only what is not on this host (Redoc's branding links a logo on its CDN):
      // nothing the page itself needs.
      for (const refusal of refusedByPolicy)
        expect(refusal).toMatch(/Loading the image 'https:\/\/cdn\.redoc\.ly\//);
    } finally {
      await browser.close();
    }
  });
});
