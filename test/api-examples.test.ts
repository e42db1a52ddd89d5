import { writeFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../src/errors.js';
import { ternOpenApi } from '../src/rest/openapi-document.js';
import { API_EXAMPLES_FILE, readApiExamples } from '../src/rest/openapi-examples.js';
import { recordApiExamples } from './support/api-examples.js';

// The reference's examples are exchanges with a real Tern (test/support/api-examples.ts), kept in
// schema/openapi-examples.json so that the document is built without running anything. This file
// fails when they are no longer what Tern answers; `npm run openapi:examples` records them again.
const WRITE = process.env.TERN_WRITE_API_EXAMPLES === 'true';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const document = ternOpenApi() as any;
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as Record<string, any>).map(([method, operation]) => ({
    label: `${method.toUpperCase()} ${path}`,
    operation,
  })),
);

function problemsOf(schema: object, value: unknown): string | undefined {
  const validate = ajv.compile(schema);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** The same exchange in any run: ids, times, tokens, secrets and codes differ, what they are does not. */
function comparable(value: unknown, key = ''): unknown {
  if (key === 'duration_ms') return typeof value;
  if (typeof value === 'string')
    return value
      .replace(/\b(msg|inb|cmp|cnt|tpl|job|whk|whd|acc|evt|req|key|vrf)_[0-9a-f]{32}\b/g, '$1_…')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/, '<jwt>')
      .replace(/\b(tern_live_|whsec_)[\w-]+/g, '$1…')
      .replace(/secret=[A-Z2-7]+/g, 'secret=…')
      .replace(/^[A-Z2-7]{32}$/, '<totp secret>')
      .replace(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/, '<recovery code>')
      .replace(/^\d{6}$/, '<one-time code>');
  if (Array.isArray(value)) return value.map((inner) => comparable(inner));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, comparable(inner, name)]));
  return value;
}

describe('the examples of /v1/openapi.json', () => {
  const examples = readApiExamples();

  it.each(operations)(
    '$label: an example for its request, its success and each error status',
    ({ operation }) => {
      const recorded = examples.operations[operation.operationId];
      expect(recorded, `no example of ${operation.operationId}: npm run openapi:examples`).toBeDefined();
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        const content = response.content['application/json'];
        if (Number(status) < 300) {
          expect(content.example).toEqual(recorded!.response);
          expect(problemsOf(content.schema, content.example), status).toBeUndefined();
          continue;
        }
        const shown = Object.entries((content.examples ?? {}) as Record<string, { value: any }>);
        expect(shown.length, `${status} has no example`).toBeGreaterThan(0);
        for (const [code, { value }] of shown) {
          expect(value.error.code).toBe(code);
          expect(problemsOf(content.schema, value), `${status} ${code}`).toBeUndefined();
        }
      }
      for (const parameter of (operation.parameters ?? []) as any[]) {
        if (parameter.in === 'path')
          expect(parameter.example, `${parameter.name} has no example`).toBeDefined();
        if (parameter.example !== undefined)
          expect(problemsOf(parameter.schema, parameter.example), parameter.name).toBeUndefined();
      }
      const body = operation.requestBody?.content?.['application/json'];
      if (body) {
        expect(body.example).toEqual(recorded!.request);
        expect(problemsOf(body.schema, body.example)).toBeUndefined();
      }
    },
  );

  it('shows details in every validation_error', () => {
    const refusals = Object.values(examples.operations).flatMap((recorded) =>
      recorded.errors.validation_error ? [recorded.errors.validation_error] : [],
    );
    expect(refusals.length).toBe(Object.keys(examples.operations).length);
    for (const refusal of refusals) expect((refusal as any).error.details.length).toBeGreaterThan(0);
  });

  it('are what a real Tern answers now', { timeout: 180_000 }, async () => {
    const fresh = await recordApiExamples();
    if (WRITE) await writeFile(API_EXAMPLES_FILE, `${JSON.stringify(fresh, null, 2)}\n`);
    const codes = (recorded: { errors: Partial<Record<ErrorCode, unknown>> }) => Object.keys(recorded.errors);
    expect(Object.keys(fresh.operations).sort()).toEqual(Object.keys(examples.operations).sort());
    for (const [operationId, recorded] of Object.entries(fresh.operations))
      expect(codes(recorded), operationId).toEqual(codes(examples.operations[operationId]!));
    expect(comparable(fresh), 'the recorded examples are stale: npm run openapi:examples').toEqual(
      comparable(readApiExamples()),
    );
  });
});
