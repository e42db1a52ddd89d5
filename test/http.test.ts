import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from './support/database.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

describe('request ids', () => {
  it('gives every response an id, in the body and in X-Request-Id', async () => {
    const first = await t.request('GET', '/v1/settings', { token: alice.token });
    const second = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(first.body.request).toMatch(/^req_[0-9a-f]{32}$/);
    expect(first.headers.get('x-request-id')).toBe(first.body.request);
    expect(second.body.request).not.toBe(first.body.request);
  });

  it('reuses a safe client-sent X-Request-Id and replaces anything else', async () => {
    const reused = await t.request('GET', '/v1/settings', {
      token: alice.token,
      headers: { 'x-request-id': 'client-trace:42.a_b' },
    });
    expect(reused.body.request).toBe('client-trace:42.a_b');
    expect(reused.headers.get('x-request-id')).toBe('client-trace:42.a_b');

    for (const unsafe of ['has space', 'x'.repeat(65), 'semi;colon', 'ünï']) {
      const replaced = await t.request('GET', '/v1/settings', {
        token: alice.token,
        headers: { 'x-request-id': encodeURI(unsafe) === unsafe ? unsafe : encodeURIComponent(unsafe) },
      });
      expect(replaced.body.request).toMatch(/^req_/);
    }
  });

  it('carries the id on errors and in GraphQL extensions', async () => {
    const error = await t.request('GET', '/v1/nowhere', { headers: { 'x-request-id': 'trace-1' } });
    expect(error.body.request).toBe('trace-1');
    const graphql = await t.request('POST', '/graphql', {
      token: alice.token,
      headers: { 'x-request-id': 'trace-2' },
      body: { query: '{ settings { timezone } }' },
    });
    expect(graphql.body.extensions.request).toBe('trace-2');
    expect(graphql.headers.get('x-request-id')).toBe('trace-2');
  });
});

describe('errors of the request itself', () => {
  it('answers 400 bad_request for a body that is not JSON', async () => {
    const response = await t.request('POST', '/v1/auth/login', {
      rawBody: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: { code: 'bad_request', message: 'The body is not valid JSON' },
      request: expect.any(String),
    });
  });

  it('answers 400 bad_request for the wrong content type', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await t.request('POST', '/v1/auth/login', {
        rawBody: 'email=a',
        headers: { 'content-type': contentType },
      });
      expect(response.status, contentType).toBe(400);
      expect(response.body.error.code).toBe('bad_request');
    }
  });

  it('answers 400 bad_request for JSON that is not an object', async () => {
    for (const body of ['[1,2]', '"text"', '42', 'null']) {
      const response = await t.request('POST', '/v1/auth/login', {
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, body).toBe(400);
      expect(response.body.error.code).toBe('bad_request');
    }
  });

  it('refuses prototype-pollution keys instead of acting on them', async () => {
    const response = await t.request('PATCH', '/v1/settings', {
      token: alice.token,
      rawBody: '{"__proto__": {"timezone": "Asia/Tokyo"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
  });

  it('answers 404 not_found for an unknown route, with or without a token', async () => {
    for (const token of [undefined, alice.token]) {
      const response = await t.request('GET', '/v1/unknown/route', { token });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const response = await t.request('DELETE', '/v1/settings', { token: alice.token });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, PATCH, HEAD');
    expect(response.body.error.code).toBe('method_not_allowed');
  });

  it('answers 405 with Allow to TRACE, OPTIONS, QUERY and HEAD on a known /v1 path, one with an id too', async () => {
    const campaign = (
      await t.request('POST', '/v1/campaigns', { token: alice.token, body: { name: 'Methods' } })
    ).body.campaign;
    // fetch() refuses to send TRACE, so these go through node:http.
    const send = (method: string, path: string) =>
      new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
        const request = http.request(
          `${t.url}${path}`,
          { method, headers: { authorization: `Bearer ${alice.token}` } },
          (response) => {
            let body = '';
            response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode!, allow: response.headers.allow, body }),
            );
          },
        );
        request.once('error', reject);
        request.end();
      });
    for (const [method, path, allow] of [
      ['TRACE', '/v1/settings', 'GET, PATCH, HEAD'],
      ['OPTIONS', '/v1/settings', 'GET, PATCH, HEAD'],
      ['TRACE', `/v1/campaigns/${campaign}`, 'GET, PATCH, DELETE, HEAD'],
      ['QUERY', '/v1/settings', 'GET, PATCH, HEAD'],
      ['QUERY', '/v1/stats/messages', 'GET, HEAD'],
      ['QUERY', `/v1/campaigns/${campaign}`, 'GET, PATCH, DELETE, HEAD'],
      ['OPTIONS', '/v1/messages/send', 'POST'],
      ['HEAD', '/v1/messages/send', 'POST'],
    ] as const) {
      const answer = await send(method, path);
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.allow, `${method} ${path}`).toBe(allow);
      if (method !== 'HEAD') expect(JSON.parse(answer.body).error.code).toBe('method_not_allowed');
    }
  });

  it('answers 413 payload_too_large for a JSON body over 1 MB, and takes one of exactly 1 MB', async () => {
    const overhead = JSON.stringify({ email: 'a@b.co', password: '' }).length;
    const padding = (size: number) =>
      JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(size - overhead) });
    expect(Buffer.byteLength(padding(1024 * 1024))).toBe(1024 * 1024);
    const atLimit = await t.request('POST', '/v1/auth/login', {
      rawBody: padding(1024 * 1024),
      headers: { 'content-type': 'application/json' },
    });
    expect(atLimit.status).toBe(422);
    const over = await t.request('POST', '/v1/auth/login', {
      rawBody: padding(1024 * 1024 + 1),
      headers: { 'content-type': 'application/json' },
    });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('payload_too_large');
  });
});

describe('unexpected failures', () => {
  it('answer 500 internal_error without leaking SQL or stack traces', async () => {
    const other = await startTern();
    try {
      const account = await other.createAccount();
      await sql(other.database.url, 'ALTER TABLE account_settings RENAME TO settings_gone');
      for (const [method, path, body] of [
        ['GET', '/v1/settings', undefined],
        ['PATCH', '/v1/settings', { timezone: 'UTC' }],
      ] as const) {
        const response = await other.request(method, path, { token: account.token, body });
        expect(response.status).toBe(500);
        expect(response.body).toEqual({
          error: { code: 'internal_error', message: expect.stringContaining('request id') },
          request: response.headers.get('x-request-id'),
        });
        expect(JSON.stringify(response.body)).not.toMatch(/settings|SELECT|prisma|at .*\.ts/i);
      }
      const graphql = await other.graphql('{ settings { timezone } }', {}, account.token);
      expect(graphql.body.errors[0]).toMatchObject({ extensions: { code: 'internal_error' } });
      expect(JSON.stringify(graphql.body)).not.toMatch(/settings_gone|SELECT|prisma/i);
    } finally {
      await other.stop();
    }
  });
});

describe('GET /health', () => {
  it('answers 200 when PostgreSQL and Redis answer', async () => {
    const response = await t.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', postgres: 'up', redis: 'up' });
  });

  it('tells a stranger each component by its status only; the metrics listener tells the detail', async () => {
    const response = await t.request('GET', '/health');
    expect(response.body).toEqual({
      status: 'ok',
      postgres: 'up',
      redis: 'up',
      carriers: 'ok',
      request: expect.any(String),
    });
    const detail = await t.healthDetail();
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      status: 'ok',
      carriers_status: 'ok',
      carriers: [{ carrier: 'default', state: 'ready', worker: expect.any(String) }],
    });
  });

  it('answers 503 naming what is down', async () => {
    const other = await startTern();
    try {
      other.tern.deps.redis.disconnect();
      const response = await other.request('GET', '/health');
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ status: 'unavailable', postgres: 'up', redis: 'down' });
    } finally {
      await other.stop();
    }
  });
});

describe('the GraphQL console', () => {
  it('serves GraphiQL to a browser outside production', async () => {
    const response = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Tern GraphQL console');
  });
});

describe('security headers', () => {
  it('come with every response', async () => {
    for (const path of ['/v1/settings', '/health', '/v1/nowhere']) {
      const response = await t.request('GET', path, { token: alice.token });
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('strict-transport-security'), path).toMatch(/max-age=\d+/);
      expect(response.headers.get('x-frame-options'), path).toBe('SAMEORIGIN');
      expect(response.headers.get('x-powered-by'), path).toBeNull();
    }
  });
});
