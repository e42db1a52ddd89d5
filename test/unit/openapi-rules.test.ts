import { describe, expect, it } from 'vitest';
import { ternOpenApi } from '../../src/rest/openapi-document.js';

const document = ternOpenApi() as any;

function operation(path: string, method: string) {
  return document.paths[path][method];
}

describe('the OpenAPI document states every rule the service enforces on input', () => {
  it('bounds Idempotency-Key to 1..255 characters', () => {
    const header = operation('/v1/messages/send', 'post').parameters.find(
      (p: { name: string }) => p.name === 'Idempotency-Key',
    );
    expect(header.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
  });

  it("says a contact's email is an e-mail address", () => {
    const body = operation('/v1/campaigns/{campaign}/contacts', 'post').requestBody.content[
      'application/json'
    ];
    expect(body.schema.properties.email.anyOf[0]).toMatchObject({ format: 'email', maxLength: 254 });
  });

  it('requires phone_column unless the file has no header', () => {
    const form = operation('/v1/campaigns/{campaign}/contacts/import', 'post').requestBody.content[
      'multipart/form-data'
    ].schema;
    expect(form.if).toEqual({ properties: { has_header: { const: false } }, required: ['has_header'] });
    expect(form.else).toEqual({ required: ['phone_column'] });
  });

  it('gives every query parameter the bounds of the argument it feeds', () => {
    const parameters = operation('/v1/messages', 'get').parameters as { name: string; schema: any }[];
    expect(parameters.find((p) => p.name === 'per_page')!.schema).toMatchObject({ minimum: 1, maximum: 100 });
    expect(parameters.find((p) => p.name === 'status')!.schema.enum).toContain('delivered');
  });
});
