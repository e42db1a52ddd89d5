import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateTemplateDocument,
  DeleteTemplateDocument,
  TemplateDocument,
  TemplatesDocument,
  TernClient,
  UpdateTemplateDocument,
} from '../src/client/index.js';
import { newId } from '../src/lib/ids.js';
import { renderTemplate } from '../src/modules/templates/render-template.js';
import { withoutTypenames } from './support/graphql-fields.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  t = await startTern();
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
});
afterAll(() => t.stop());

const create = (account: TestAccount, body: unknown) =>
  t.request('POST', '/v1/templates', { token: account.token, body });

async function createTemplate(
  account: TestAccount,
  name = 'Welcome',
  content = 'Hi {{name}}, welcome!',
): Promise<string> {
  const response = await create(account, { name, content });
  expect(response.status).toBe(201);
  return response.body.template;
}

async function createCampaign(accountId: string, templateId: string): Promise<string> {
  const id = newId('cmp');
  await t.tern.deps.prisma.campaign.create({ data: { id, accountId, name: 'Spring sale', templateId } });
  return id;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /v1/templates', () => {
  it('answers 201 with the template, and GET reads it back', async () => {
    const response = await create(alice, {
      name: 'Order shipped',
      content: 'Hi {{name}}, your order is on its way',
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      template: expect.stringMatching(/^tpl_[0-9a-f]{32}$/),
      name: 'Order shipped',
      content: 'Hi {{name}}, your order is on its way',
      created_at: expect.stringMatching(ISO),
      updated_at: response.body.created_at,
      request: response.headers.get('x-request-id'),
    });

    const read = await t.request('GET', `/v1/templates/${response.body.template}`, { token: alice.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ ...response.body, request: read.headers.get('x-request-id') });
  });

  it.each([
    ['single braces and spaced placeholders', 'Price {5} {{name}} {{ tags }}'],
    ['triple braces around a placeholder', 'Code {{{document}}}'],
    ['an unknown placeholder', 'Use {{coupon}} today'],
    ['1600 characters', 'x'.repeat(1600)],
    ['1600 emoji, one character each', '😀'.repeat(1600)],
  ])('accepts content with %s', async (_case, content) => {
    const response = await create(alice, { name: 'Accepted', content });
    expect(response.status).toBe(201);
    expect(response.body.content).toBe(content);
  });

  it('accepts names of 3 and 80 characters, emoji counting one each', async () => {
    for (const name of ['abc', 'n'.repeat(80), '😀'.repeat(80)]) {
      expect((await create(alice, { name, content: 'Hi' })).status).toBe(201);
    }
  });

  it.each([
    [
      {},
      [
        { field: 'name', issue: 'required' },
        { field: 'content', issue: 'required' },
      ],
    ],
    [{ name: 'Hello' }, [{ field: 'content', issue: 'required' }]],
    [{ content: 'Hello' }, [{ field: 'name', issue: 'required' }]],
    [{ name: 'ab', content: 'Hello' }, [{ field: 'name', issue: 'too_short' }]],
    [{ name: 'n'.repeat(81), content: 'Hello' }, [{ field: 'name', issue: 'too_long' }]],
    [{ name: 'Hello', content: '' }, [{ field: 'content', issue: 'too_short' }]],
    [{ name: 'Hello', content: 'x'.repeat(1601) }, [{ field: 'content', issue: 'too_long' }]],
    [{ name: 'Hello', content: '😀'.repeat(1601) }, [{ field: 'content', issue: 'too_long' }]],
    [{ name: 'Hello', content: 'Hi {{name' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ name: 'Hello', content: 'Hi name}}' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ name: 'Hello', content: '{{ }}' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ name: 'Hello', content: 'Hi {{first name}}' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ name: 'Hello', content: 'Hi {{name}} {{' }, [{ field: 'content', issue: 'invalid_format' }]],
    [
      { name: 'ab', content: 'Hi {{name' },
      [
        { field: 'name', issue: 'too_short' },
        { field: 'content', issue: 'invalid_format' },
      ],
    ],
    [
      { name: 5, content: ['Hi'] },
      [
        { field: 'content', issue: 'invalid_value' },
        { field: 'name', issue: 'invalid_value' },
      ],
    ],
    [{ name: 'Hello', content: 'Hi', template: 'tpl_x' }, [{ field: 'template', issue: 'unknown_field' }]],
  ])('refuses %j with 422 and the details %j, storing nothing', async (body, details) => {
    const before = await t.tern.deps.prisma.template.count();
    const response = await create(alice, body);
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({ code: 'validation_error', message: expect.any(String), details });
    expect(await t.tern.deps.prisma.template.count()).toBe(before);
  });
});

describe('PATCH /v1/templates/{template}', () => {
  it('changes the content, and the name when sent', async () => {
    const id = await createTemplate(alice, 'Reminder', 'See you {{name}}');
    const created = await t.request('GET', `/v1/templates/${id}`, { token: alice.token });
    t.clock.advance(1000);

    const contentOnly = await t.request('PATCH', `/v1/templates/${id}`, {
      token: alice.token,
      body: { content: 'See you soon, {{name}}' },
    });
    expect(contentOnly.status).toBe(200);
    expect(contentOnly.body).toEqual({
      template: id,
      name: 'Reminder',
      content: 'See you soon, {{name}}',
      created_at: created.body.created_at,
      updated_at: expect.stringMatching(ISO),
      request: contentOnly.headers.get('x-request-id'),
    });
    expect(Date.parse(contentOnly.body.updated_at)).toBeGreaterThan(Date.parse(created.body.created_at));

    const both = await t.request('PATCH', `/v1/templates/${id}`, {
      token: alice.token,
      body: { name: 'Friendly reminder', content: 'Bye {{ name }}' },
    });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ template: id, name: 'Friendly reminder', content: 'Bye {{ name }}' });
    const read = await t.request('GET', `/v1/templates/${id}`, { token: alice.token });
    expect(read.body).toMatchObject({ name: 'Friendly reminder', content: 'Bye {{ name }}' });
  });

  it.each([
    [{}, [{ field: 'content', issue: 'required' }]],
    [{ name: 'Only the name' }, [{ field: 'content', issue: 'required' }]],
    [{ content: '' }, [{ field: 'content', issue: 'too_short' }]],
    [{ content: 'x'.repeat(1601) }, [{ field: 'content', issue: 'too_long' }]],
    [{ content: 'Hi {{name' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ content: 'Hi name}}' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ content: '{{ }}' }, [{ field: 'content', issue: 'invalid_format' }]],
    [{ name: 'ab', content: 'Hi' }, [{ field: 'name', issue: 'too_short' }]],
    [{ name: 'n'.repeat(81), content: 'Hi' }, [{ field: 'name', issue: 'too_long' }]],
    [{ content: 'Hi', tags: [] }, [{ field: 'tags', issue: 'unknown_field' }]],
  ])('refuses %j with 422 and the details %j, changing nothing', async (body, details) => {
    const id = await createTemplate(alice, 'Unchanged', 'Hello {{name}}');
    const response = await t.request('PATCH', `/v1/templates/${id}`, { token: alice.token, body });
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({ code: 'validation_error', message: expect.any(String), details });
    const read = await t.request('GET', `/v1/templates/${id}`, { token: alice.token });
    expect(read.body).toMatchObject({ name: 'Unchanged', content: 'Hello {{name}}' });
  });
});

describe('DELETE /v1/templates/{template}', () => {
  it('answers 200 { template, deleted: true }, after which the template is gone', async () => {
    const id = await createTemplate(alice, 'Short lived');
    const response = await t.request('DELETE', `/v1/templates/${id}`, { token: alice.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      template: id,
      deleted: true,
      request: response.headers.get('x-request-id'),
    });
    expect((await t.request('GET', `/v1/templates/${id}`, { token: alice.token })).status).toBe(404);
    const again = await t.request('DELETE', `/v1/templates/${id}`, { token: alice.token });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
  });

  it('answers 409 conflict while a campaign uses the template, and deletes it once that campaign is deleted', async () => {
    const id = await createTemplate(alice, 'In use');
    const campaign = await createCampaign(alice.account, id);

    const refused = await t.request('DELETE', `/v1/templates/${id}`, { token: alice.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: { code: 'conflict', message: expect.any(String) },
      request: refused.headers.get('x-request-id'),
    });
    expect((await t.request('GET', `/v1/templates/${id}`, { token: alice.token })).status).toBe(200);

    await t.tern.deps.prisma.campaign.update({ where: { id: campaign }, data: { deletedAt: new Date() } });
    const deleted = await t.request('DELETE', `/v1/templates/${id}`, { token: alice.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ template: id, deleted: true });
    const detached = await t.tern.deps.prisma.campaign.findUniqueOrThrow({ where: { id: campaign } });
    expect(detached).toMatchObject({ templateId: null, deletedAt: expect.any(Date) });
  });
});

describe("another account's templates", () => {
  it('are 404 on GET, PATCH and DELETE, untouched, and absent from the list', async () => {
    const id = await createTemplate(alice, 'Private', 'Only for {{name}}');
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { content: 'Taken over' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await t.request(method, `/v1/templates/${id}`, { token: bob.token, body });
      expect(response.status, method).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const read = await t.request('GET', `/v1/templates/${id}`, { token: alice.token });
    expect(read.body).toMatchObject({ name: 'Private', content: 'Only for {{name}}' });

    const list = await t.request('GET', '/v1/templates?per_page=100', { token: bob.token });
    expect(list.body.data.map((template: { template: string }) => template.template)).not.toContain(id);
  });

  it.each(['GET', 'PATCH', 'DELETE'])('and unknown ids are 404 on %s', async (method) => {
    const response = await t.request(method, '/v1/templates/tpl_unknown', {
      token: alice.token,
      body: method === 'PATCH' ? { content: 'x' } : undefined,
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('GET /v1/templates', () => {
  it("lists the account's templates newest first, paginated", async () => {
    const carol = await t.createAccount();
    const ids: string[] = [];
    for (const name of ['First', 'Second', 'Third'])
      ids.push(await createTemplate(carol, name, `${name} {{name}}`));
    await createTemplate(bob, "Not carol's");

    const all = await t.request('GET', '/v1/templates', { token: carol.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      page: 1,
      per_page: 20,
      total: 3,
      request: all.headers.get('x-request-id'),
    });
    expect(all.body.data.map((template: { template: string }) => template.template)).toEqual(
      [...ids].reverse(),
    );
    expect(all.body.data[0]).toEqual({
      template: ids[2],
      name: 'Third',
      content: 'Third {{name}}',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });

    const page2 = await t.request('GET', '/v1/templates?page=2&per_page=2', { token: carol.token });
    expect(page2.body).toMatchObject({ page: 2, per_page: 2, total: 3 });
    expect(page2.body.data.map((template: { template: string }) => template.template)).toEqual([ids[0]]);

    const beyond = await t.request('GET', '/v1/templates?page=5', { token: carol.token });
    expect(beyond.body).toMatchObject({ data: [], page: 5, total: 3 });
  });

  it.each([
    ['per_page=101', 'per_page'],
    ['per_page=0', 'per_page'],
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['page=1&page=2', 'page'],
  ])('refuses ?%s with 422 on %s', async (query, field) => {
    const response = await t.request('GET', `/v1/templates?${query}`, { token: alice.token });
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({
      code: 'validation_error',
      message: expect.any(String),
      details: [{ field, issue: 'invalid_value' }],
    });
  });
});

describe('templates through GraphQL', () => {
  it('returns the same data as /v1, through the typed client documents', async () => {
    const dave = await t.createAccount();
    const client = new TernClient({ url: `${t.url}/graphql`, token: dave.token });

    const created = await client.request(CreateTemplateDocument, {
      input: { name: 'Through GraphQL', content: 'Hi {{name}}' },
    });
    if (!('template' in created.create_template))
      throw new Error(`expected a Template, got ${created.create_template.__typename}`);
    const id = created.create_template.template;
    expect(created.create_template).toMatchObject({ name: 'Through GraphQL', content: 'Hi {{name}}' });

    const updated = await client.request(UpdateTemplateDocument, {
      id,
      input: { content: 'Hello {{ name }}' },
    });
    expect(updated.update_template).toMatchObject({
      template: id,
      name: 'Through GraphQL',
      content: 'Hello {{ name }}',
    });

    const one = await client.request(TemplateDocument, { id });
    const restOne = await t.request('GET', `/v1/templates/${id}`, { token: dave.token });
    const { request: _request, ...restOneData } = restOne.body;
    expect(withoutTypenames(one.template)).toEqual(restOneData);

    const list = await client.request(TemplatesDocument, { perPage: 10 });
    const restList = await t.request('GET', '/v1/templates?per_page=10', { token: dave.token });
    const { request: _listRequest, ...restListData } = restList.body;
    expect(withoutTypenames(list.templates)).toEqual(restListData);

    const removed = await client.request(DeleteTemplateDocument, { id });
    expect(removed.delete_template).toEqual({ __typename: 'DeletedTemplate', template: id, deleted: true });
  });

  it('answers typed errors: ValidationError with GraphQL field names, NotFoundError, ConflictError', async () => {
    const client = new TernClient({ url: `${t.url}/graphql`, token: alice.token });
    const invalid = await client.request(CreateTemplateDocument, {
      input: { name: 'ab', content: 'Hi {{name' },
    });
    expect(invalid.create_template).toMatchObject({
      __typename: 'ValidationError',
      error_code: 'validation_error',
      error_details: [
        { field: 'name', issue: 'too_short' },
        { field: 'content', issue: 'invalid_format' },
      ],
    });
    const noContent = await client.request(UpdateTemplateDocument, {
      id: 'tpl_unknown',
      // @ts-expect-error: the typed client refuses a missing content; the server's own answer is checked here
      input: { name: 'Renamed' },
    });
    expect(noContent.update_template).toMatchObject({
      __typename: 'ValidationError',
      error_details: [{ field: 'content', issue: 'required' }],
    });

    const bobs = await createTemplate(bob, "Bob's");
    expect((await client.request(TemplateDocument, { id: bobs })).template).toMatchObject({
      __typename: 'NotFoundError',
      error_code: 'not_found',
    });
    expect(
      (await client.request(UpdateTemplateDocument, { id: bobs, input: { content: 'x' } })).update_template,
    ).toMatchObject({ __typename: 'NotFoundError' });
    expect((await client.request(DeleteTemplateDocument, { id: bobs })).delete_template).toMatchObject({
      __typename: 'NotFoundError',
    });

    const used = await createTemplate(alice, 'Used by a campaign');
    await createCampaign(alice.account, used);
    expect((await client.request(DeleteTemplateDocument, { id: used })).delete_template).toMatchObject({
      __typename: 'ConflictError',
      error_code: 'conflict',
    });

    const page = await client.request(TemplatesDocument, { perPage: 101 });
    expect(page.templates).toMatchObject({
      __typename: 'ValidationError',
      error_details: [{ field: 'perPage', issue: 'invalid_value' }],
    });
  });

  it('lists the distinct placeholder names in order', async () => {
    const id = await createTemplate(
      alice,
      'Placeholders',
      'Hi {{name}} ({{ email }}), {{ name }} {{coupon}} {x} {{{tags}}}',
    );
    const response = await t.graphql(
      `{ template(id: "${id}") { ... on Template { placeholders } } }`,
      {},
      alice.token,
    );
    expect(response.body.data.template).toEqual({ placeholders: ['name', 'email', 'coupon', 'tags'] });
  });
});

describe('renderTemplate', () => {
  const contact = {
    name: 'Zoë',
    phone: '5511999990000',
    email: 'zoe@example.com',
    document: '123.456',
    tags: ['vip', 'sp'],
  };

  it('fills the five contact placeholders, with or without spaces inside the braces', () => {
    expect(renderTemplate('{{name}}|{{ phone }}|{{email}}|{{  document}}|{{tags}}', contact)).toBe(
      'Zoë|5511999990000|zoe@example.com|123.456|vip, sp',
    );
  });

  it('leaves missing contact fields empty', () => {
    expect(
      renderTemplate('Hi {{name}} <{{email}}> #{{document}} [{{tags}}]', {
        name: null,
        phone: '5511999990000',
        email: null,
        document: null,
        tags: [],
      }),
    ).toBe('Hi  <> # []');
  });

  it('leaves an unknown placeholder as written', () => {
    expect(renderTemplate('Use {{coupon}} or {{ Name }}, {{name}}', contact)).toBe(
      'Use {{coupon}} or {{ Name }}, Zoë',
    );
  });

  it('keeps UCS-2 content and values as they are', () => {
    expect(renderTemplate('Olá {{name}} 😀 ção {{tags}}', { ...contact, tags: ['naïve', '日本'] })).toBe(
      'Olá Zoë 😀 ção naïve, 日本',
    );
  });
});
