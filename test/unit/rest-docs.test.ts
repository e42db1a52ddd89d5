import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { restApiPage } from '../../scripts/rest-docs.js';
import { ternOpenApi } from '../../src/rest/openapi-document.js';
import { routes } from '../../src/rest/route-table.js';

describe('docs/rest-api.md', () => {
  it('names every route of the route table', () => {
    const page = readFileSync(new URL('../../docs/rest-api.md', import.meta.url), 'utf8');
    for (const route of routes) {
      const heading = `### ${route.method} ${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}\n`;
      expect(page, heading).toContain(heading);
    }
  });

  it('says of every route what the OpenAPI document says (npm run docs:routes rewrites it)', () => {
    const page = readFileSync(new URL('../../docs/rest-api.md', import.meta.url), 'utf8');
    expect(page).toBe(restApiPage(page));
  });
});

describe('a client generated with openapi-typescript', () => {
  it('does not compile a send without `to`', { timeout: 60_000 }, () => {
    const directory = mkdtempSync(join(tmpdir(), 'tern-client-'));
    writeFileSync(join(directory, 'openapi.json'), JSON.stringify(ternOpenApi()));
    const bin = new URL('../../node_modules/.bin/', import.meta.url).pathname;
    execFileSync(`${bin}openapi-typescript`, ['openapi.json', '-o', 'v1.d.ts'], {
      cwd: directory,
      stdio: 'pipe',
    });
    writeFileSync(
      join(directory, 'client.ts'),
      `import type { paths } from './v1.js';
type SendBody = paths['/v1/messages/send']['post']['requestBody']['content']['application/json'];
export const good: SendBody = { to: '+5511987654321', message: 'hi' };
// @ts-expect-error: to is required
export const missingTo: SendBody = { message: 'hi' };
// @ts-expect-error: the text field is message, not text
export const wrongField: SendBody = { to: '5511987654321', text: 'hi' };
`,
    );
    // tsc fails on an unused @ts-expect-error, so this passes only if both bodies are refused.
    execFileSync(
      `${bin}tsc`,
      ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'client.ts'],
      { cwd: directory, stdio: 'pipe' },
    );
  });
});
