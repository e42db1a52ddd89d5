import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printTernSchema, SCHEMA_FILE } from '../src/graphql/print-schema.js';
import { routes } from '../src/rest/route-table.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

describe('GET /v1/openapi.json', () => {
  it('describes every route of the table, with its success status', async () => {
    const response = await t.request('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toMatch(/^3\./);
    const described = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({
          path,
          method: method.toUpperCase(),
          operation,
        })),
    );
    expect(described).toHaveLength(routes.length);
    for (const route of routes) {
      const entry = described.find(
        (d) => d.path === route.path.replace(/:(\w+)/g, '{$1}') && d.method === route.method,
      );
      expect(entry, `${route.method} ${route.path}`).toBeDefined();
      expect(Object.keys(entry!.operation.responses)).toContain(String(route.status));
    }
  });

  it('derives request and response shapes from the GraphQL operations', async () => {
    const { body } = await t.request('GET', '/v1/openapi.json');
    const patch = body.paths['/v1/settings'].patch;
    expect(patch.requestBody.content['application/json'].schema.properties).toEqual({
      default_sender: {
        anyOf: [expect.objectContaining({ type: 'string', pattern: expect.any(String) }), { type: 'null' }],
      },
      timezone: expect.objectContaining({ type: 'string', maxLength: 64 }),
      send_window: {
        anyOf: [
          expect.objectContaining({ type: 'object', required: ['days', 'start', 'end'] }),
          { type: 'null' },
        ],
      },
      message_validity: expect.objectContaining({ type: 'integer', minimum: 60, maximum: 259200 }),
    });
    expect(Object.keys(patch.responses['200'].content['application/json'].schema.properties)).toEqual([
      'account',
      'timezone',
      'default_sender',
      'two_factor_enabled',
      'send_window',
      'message_validity',
      'limits',
      'usage',
      'senders',
      'request',
    ]);
    expect(body.paths['/v1/auth/login'].post.security).toEqual([]);
  });

  it('carries the rules the service enforces: required fields, bounds, patterns, nullability', async () => {
    const { body } = await t.request('GET', '/v1/openapi.json');
    const send = body.paths['/v1/messages/send'].post;
    const sendBody = send.requestBody.content['application/json'].schema;
    expect(sendBody.required).toEqual(['to', 'message']);
    expect(sendBody.properties.to.pattern).toBe('^\\+?[1-9][0-9]{6,14}$');
    expect(sendBody.properties.message).toMatchObject({ minLength: 1, maxLength: 1600 });
    expect(sendBody.additionalProperties).toBe(false);
    expect(send.requestBody.content['application/json'].example.to).toMatch(/^\+?\d+$/);
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['202', '401', '422', '429']));
    expect(
      send.responses['422'].content['application/json'].schema.properties.error.properties.code.enum,
    ).toEqual(['validation_error', 'fraud_blocked']);
    expect(send.responses['202'].headers['Idempotent-Replayed']).toBeDefined();

    const perPage = body.paths['/v1/messages'].get.parameters.find((p: any) => p.name === 'per_page');
    expect(perPage.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    const campaign = body.paths['/v1/campaigns'].post.requestBody.content['application/json'].schema;
    expect(campaign.required).toEqual(['name']);
    for (const field of ['webhook', 'template', 'send_at'])
      expect(JSON.stringify(campaign.properties[field]), field).toContain('"null"');

    const ids = Object.values(body.paths as Record<string, Record<string, any>>).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(body.paths['/v1/messages'].post.operationId).not.toBe(send.operationId);
  });

  it("documents 409 and 403 only where the route can answer them: from its field's declared errors and the route table", async () => {
    const { body } = await t.request('GET', '/v1/openapi.json');
    const statuses = (path: string, method: string) => Object.keys(body.paths[path][method].responses);
    expect(statuses('/v1/campaigns/{campaign}/start', 'post')).toContain('409');
    expect(statuses('/v1/templates/{template}', 'delete')).toContain('409');
    expect(statuses('/v1/messages/send', 'post')).not.toContain('409');
    expect(statuses('/v1/webhooks/{webhook}', 'delete')).not.toContain('409');
    expect(statuses('/v1/settings/two-factor', 'post')).toContain('403');
    expect(statuses('/v1/api-keys', 'post')).toContain('403');
    expect(statuses('/v1/api-keys', 'get')).not.toContain('403');
  });

  it('lists routes that all answer, none missing or failing', async () => {
    const { body } = await t.request('GET', '/v1/openapi.json');
    for (const [path, methods] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
      for (const method of Object.keys(methods)) {
        const concrete = path.replace(/\{\w+\}/g, 'xyz_0000');
        const response = await t.request(method.toUpperCase(), concrete, {
          token: alice.token,
          ...(method === 'get' || method === 'delete' ? {} : { body: {} }),
        });
        const label = `${method.toUpperCase()} ${path} → ${response.status} ${JSON.stringify(response.body)}`;
        expect(response.status, label).not.toBe(405);
        expect(response.status, label).toBeLessThan(500);
        expect(response.body?.error?.message ?? '', label).not.toMatch(/^No route/);
        expect(response.body.request, label).toBe(response.headers.get('x-request-id'));
      }
    }
  });
});

describe('schema/schema.graphql', () => {
  it('is the schema the code builds (run npm run schema:print after changing it)', async () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await printTernSchema());
  });
});
