import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ternOpenApi } from '../src/rest/openapi-document.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

type Schema = Record<string, any>;

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

const WORD = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);

/** Values that fit a schema of the document: what a generated client could send. */
function valid(schema: Schema, name = ''): fc.Arbitrary<unknown> {
  if (schema.examples?.length) return fc.constantFrom(...schema.examples);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((member: Schema) => valid(member, name)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      // One of several sets of required fields (a replay: since or event).
      if (schema.oneOf)
        return fc.oneof(...schema.oneOf.map((branch: Schema) => valid(chosen(schema, branch))));
      const properties = Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([k, v]) => [k, valid(v, k)]),
      );
      return fc.record(properties, { requiredKeys: schema.required ?? [] });
    }
    case 'array': {
      const size = { minLength: schema.minItems ?? 0, maxLength: 3 };
      return schema.uniqueItems
        ? fc.uniqueArray(valid(schema.items ?? {}), size)
        : fc.array(valid(schema.items ?? {}), size);
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: Math.min(schema.maximum ?? 1000, 1000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      // A replay reaches back at most 7 days, a rule of time the schema only describes.
      if (schema.format === 'date-time' && name === 'since')
        return fc
          .integer({ min: 60, max: 6 * 24 * 3600 })
          .map((s) => new Date(Date.now() - s * 1000).toISOString());
      // A scheduled send goes at most 35 days ahead, another rule of time the schema only describes.
      if (schema.format === 'date-time' && name === 'send_at')
        return fc
          .integer({ min: 3600, max: 34 * 24 * 3600 })
          .map((s) => new Date(Date.now() + s * 1000).toISOString());
      // A statistics range ends after it starts, at most 400 days later, another rule of time.
      if (schema.format === 'date-time' && name === 'from')
        return fc
          .integer({ min: 3600, max: 6 * 24 * 3600 })
          .map((s) => new Date(Date.now() - s * 1000).toISOString());
      if (schema.format === 'date-time' && name === 'to')
        return fc
          .integer({ min: 60, max: 24 * 3600 })
          .map((s) => new Date(Date.now() + s * 1000).toISOString());
      if (schema.format === 'date-time')
        return fc
          .date({ min: new Date('2030-01-01'), max: new Date('2031-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      if (schema.format === 'uri') return fc.constant('https://example.com/hook');
      if (schema.pattern)
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => s.length <= (schema.maxLength ?? 100));
      return WORD.filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? 12));
    default:
      return fc.constant(null);
  }
}

/** The object schema with one branch of its oneOf chosen: that branch's field required and not null, the others left out. */
function chosen(schema: Schema, branch: Schema): Schema {
  const others = schema.oneOf.filter((b: Schema) => b !== branch).flatMap((b: Schema) => b.required);
  const properties = Object.fromEntries(
    Object.entries(schema.properties as Record<string, Schema>)
      .filter(([key]) => !others.includes(key))
      .map(([key, inner]) => [
        key,
        branch.required.includes(key) && inner.anyOf
          ? inner.anyOf.find((m: Schema) => m.type !== 'null')
          : inner,
      ]),
  );
  return { ...schema, oneOf: undefined, required: branch.required, properties };
}

/** A body the document refuses: a required field left out, a field of the wrong type, or an unknown one. */
function invalid(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(schema.properties ?? {});
  const required: string[] = schema.required ?? [];
  const base = valid(schema) as fc.Arbitrary<Record<string, unknown>>;
  const mutations: fc.Arbitrary<Record<string, unknown>>[] = [
    base.map((body) => ({ ...body, not_a_field: 1 })),
  ];
  if (required.length)
    mutations.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([body, field]) => {
        const { [field]: _, ...rest } = body;
        return rest;
      }),
    );
  if (fields.length)
    mutations.push(
      fc
        .tuple(base, fc.constantFrom(...fields))
        .map(([body, field]) => ({ ...body, [field]: { nested: [] } })),
    );
  return fc.oneof(...mutations);
}

// What JSON Schema cannot say: whether a referenced record exists, a webhook answers, a number opted
// out, a number's length exists in the numbering plan of its calling code, the account may reach its
// country, the operator approved the sender, the country's rules let the sender reach it.
const STATE_ISSUES = new Set([
  'not_found',
  'unreachable',
  'opted_out',
  'reused',
  'impossible_number',
  'destination_not_allowed',
  'sender_not_allowed',
  'no_compliant_sender',
]);

const document = ternOpenApi();
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as Record<string, any>)
    .filter(([, operation]) => operation.requestBody?.content?.['application/json'])
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

describe('requests generated from /v1/openapi.json', () => {
  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s: valid → 2xx or a documented state error; invalid → a documented 4xx; never 5xx',
    { timeout: 60_000 },
    async (_label, { path, method, operation }) => {
      const schema = operation.requestBody.content['application/json'].schema as Schema;
      const concrete = path.replace(/\{\w+\}/g, 'xyz_missing');
      const documented = Object.keys(operation.responses).map(Number);
      await fc.assert(
        fc.asyncProperty(valid(schema), async (body) => {
          const response = await t.request(method, concrete, { token: alice.token, body });
          const label = `${method} ${concrete} ${JSON.stringify(body)} → ${response.status} ${JSON.stringify(response.body)}`;
          expect(documented, label).toContain(response.status);
          expect(response.status, label).toBeLessThan(500);
          if (response.status === 422) {
            const issues: string[] = response.body.error.details.map((d: { issue: string }) => d.issue);
            expect(
              issues.every((issue) => STATE_ISSUES.has(issue)),
              label,
            ).toBe(true);
          }
        }),
        { numRuns: 8 },
      );
      await fc.assert(
        fc.asyncProperty(invalid(schema), async (body) => {
          const response = await t.request(method, concrete, { token: alice.token, body });
          const label = `${method} ${concrete} ${JSON.stringify(body)} → ${response.status}`;
          expect(documented, label).toContain(response.status);
          expect(response.status, label).toBeGreaterThanOrEqual(400);
          expect(response.status, label).toBeLessThan(500);
        }),
        { numRuns: 8 },
      );
    },
  );
});

/** A query parameter's value that the document refuses: out of its range, outside its enum, or against its pattern. */
function invalidParameter(schema: Schema): fc.Arbitrary<string> | null {
  if (schema.enum) return WORD.filter((word) => !schema.enum.includes(word));
  if (schema.type === 'integer')
    return fc.oneof(
      fc.constant(String((schema.minimum ?? 1) - 1)),
      fc.constant(String((schema.maximum ?? 1_000_000) + 1)),
      fc.constant('ten'),
    );
  if (schema.pattern) return WORD.filter((word) => !new RegExp(schema.pattern).test(word));
  if (schema.maxLength) return fc.constant('x'.repeat(schema.maxLength + 1));
  return null;
}

const parameterised = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as Record<string, any>)
    .filter(([, operation]) => !operation.requestBody)
    .map(([method, operation]) => ({
      path,
      method: method.toUpperCase(),
      documented: Object.keys(operation.responses).map(Number),
      query: ((operation.parameters ?? []) as Schema[]).filter((parameter) => parameter.in === 'query'),
    })),
);

describe('query strings and ids generated from /v1/openapi.json', () => {
  it.each(parameterised.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s: valid → 2xx or a documented state error; invalid → a documented 4xx; never 5xx',
    { timeout: 60_000 },
    async (_label, { path, method, documented, query }) => {
      // An id that names nothing of the caller's: the route must answer its documented 404.
      const concrete = path.replace(/\{\w+\}/g, 'xyz_missing');
      const validQuery = fc.record(
        Object.fromEntries(
          query.map((parameter) => [parameter.name, valid(parameter.schema, parameter.name)]),
        ),
        { requiredKeys: [] },
      );
      const send = (values: Record<string, unknown>) => {
        const search = new URLSearchParams(
          Object.entries(values).map(([name, value]) => [name, String(value)] as [string, string]),
        ).toString();
        return t.request(method, search ? `${concrete}?${search}` : concrete, { token: alice.token });
      };
      await fc.assert(
        fc.asyncProperty(validQuery, async (values) => {
          const response = await send(values);
          const label = `${method} ${concrete} ${JSON.stringify(values)} → ${response.status} ${JSON.stringify(response.body)}`;
          expect(documented, label).toContain(response.status);
          expect([200, 201, 202, 404, 409], label).toContain(response.status);
        }),
        { numRuns: 6 },
      );
      const refusable = query.flatMap((parameter) => {
        const bad = invalidParameter(parameter.schema);
        return bad ? [bad.map((value) => ({ [parameter.name]: value }))] : [];
      });
      if (refusable.length === 0) return;
      await fc.assert(
        fc.asyncProperty(fc.oneof(...refusable), async (values) => {
          const response = await send(values);
          const label = `${method} ${concrete} ${JSON.stringify(values)} → ${response.status}`;
          expect(documented, label).toContain(response.status);
          // A missing id may be found out before the bad parameter: either is the client's fault.
          expect([404, 422], label).toContain(response.status);
        }),
        { numRuns: 6 },
      );
    },
  );
});

describe('what the document says Tern refuses', () => {
  const paths = document.paths as Record<string, Record<string, Schema>>;
  const body = (path: string, method: string) =>
    paths[path]![method]!.requestBody.content['application/json'].schema as Schema;

  it("writes a phone's pattern, and Tern refuses exactly what it does not match", async () => {
    const phone = body('/v1/campaigns/{campaign}/contacts', 'post').properties.phone as Schema;
    expect(phone.pattern).toBeDefined();
    const pattern = new RegExp(phone.pattern);
    const campaign = (
      await t.request('POST', '/v1/campaigns', { token: alice.token, body: { name: 'Pattern' } })
    ).body.campaign;
    for (const written of ['abc', '+0123456789', '12345', '+44 20 x 7946 0958', '++442079460958']) {
      expect(pattern.test(written), written).toBe(false);
      const response = await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
        token: alice.token,
        body: { phone: written },
      });
      expect(response.status, written).toBe(422);
      expect(response.body.error.details, written).toEqual([{ field: 'phone', issue: 'invalid_e164' }]);
    }
    for (const written of ['+44 (20) 7946-0958', ' 44.20.7946.0959 ', '+1 202 555 0101']) {
      expect(pattern.test(written), written).toBe(true);
      const response = await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
        token: alice.token,
        body: { phone: written },
      });
      expect(response.status, written).toBe(201);
    }
  });

  it('says that a send window may not end where it starts, which Tern refuses', async () => {
    const window = body('/v1/settings', 'patch').properties.send_window.anyOf.find(
      (member: Schema) => member.type === 'object',
    ) as Schema;
    expect(window.properties.end.description).toContain('not the same as `start`');
    const response = await t.request('PATCH', '/v1/settings', {
      token: alice.token,
      body: { send_window: { days: ['mon'], start: '09:00', end: '09:00' } },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'send_window.end', issue: 'invalid_value' }]);
  });

  it('says when an import needs file_format: a file name without .csv, .txt or .xlsx', () => {
    const form = paths['/v1/campaigns/{campaign}/contacts/import']!.post!.requestBody.content[
      'multipart/form-data'
    ].schema as Schema;
    const format = (form.properties.file_format as Schema).anyOf.find((member: Schema) => member.enum);
    expect(format.description).toMatch(/required when the name ends in none of them/);
  });
});
