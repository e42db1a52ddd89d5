import { isEnumType, isInputObjectType, isNonNullType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

/**
 * Inputs are typed as precisely as the rules: what the domain requires is non-null, closed sets
 * are enums. A client gets a ValidationError naming each missing field either way, as /v1 does.
 */

let t: TestTern;
let account: TestAccount;

beforeAll(async () => {
  t = await startTern({ role: 'api' });
  account = await t.createAccount();
});
afterAll(async () => {
  await t?.stop();
});

const REQUIRED: Record<string, string[]> = {
  SendMessageInput: ['message', 'to'],
  PreviewMessageInput: ['message'],
  LoginInput: ['email', 'password'],
  CreateApiKeyInput: ['name'],
  TwoFactorCodeInput: ['code'],
  CreateTemplateInput: ['content', 'name'],
  UpdateTemplateInput: ['content'],
  CreateCampaignInput: ['name'],
  UpdateCampaignInput: [],
  AddContactInput: ['phone'],
  RegisterWebhookInput: ['events', 'url'],
  UpdateWebhookInput: [],
  UpdateSettingsInput: [],
  ReplayWebhookInput: [],
  ImportContactsInput: [],
  SendWindowInput: ['days', 'end', 'start'],
  StartVerificationInput: ['to'],
  CheckVerificationInput: ['code'],
};

const SEND = `mutation ($input: SendMessageInput!) {
  sendMessage(input: $input) {
    __typename
    ... on ValidationError { code details { field issue } }
  }
}`;

describe('input types', () => {
  it('make exactly the fields the rules require non-null', () => {
    const inputs = Object.values(t.schema.getTypeMap()).filter(isInputObjectType);
    const required = Object.fromEntries(
      inputs.map((input) => [
        input.name,
        Object.values(input.getFields())
          .filter((field) => isNonNullType(field.type))
          .map((field) => field.name)
          .sort(),
      ]),
    );
    expect(required).toEqual(REQUIRED);
  });

  it('take webhook event kinds as an enum of the subscribable kinds', () => {
    const input = t.schema.getType('RegisterWebhookInput');
    const events = isInputObjectType(input) ? input.getFields().events!.type : null;
    expect(String(events)).toBe('[WebhookEventKind!]!');
    const kind = t.schema.getType('WebhookEventKind');
    if (!isEnumType(kind)) throw new Error('WebhookEventKind is not an enum');
    expect(kind.getValues().map((value) => [value.name, value.value])).toEqual([
      ['account_country_blocked', 'account.country_blocked'],
      ['message_delivered', 'message.delivered'],
      ['message_failed', 'message.failed'],
      ['message_replied', 'message.replied'],
      ['verification_approved', 'verification.approved'],
      ['verification_expired', 'verification.expired'],
    ]);
  });
});

describe('a send without `to`', () => {
  it('answers 422 in /v1 with every missing field', async () => {
    const response = await t.request('POST', '/v1/messages/send', { token: account.token, body: {} });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([
      { field: 'to', issue: 'required' },
      { field: 'message', issue: 'required' },
    ]);
  });

  it('answers the same ValidationError through GraphQL variables', async () => {
    const response = await t.graphql(SEND, { input: { message: 'Hi' } }, account.token);
    expect(response.body.data.sendMessage).toEqual({
      __typename: 'ValidationError',
      code: 'validation_error',
      details: [{ field: 'to', issue: 'required' }],
    });
  });

  it('is refused by GraphQL itself when written in the document, naming the field', async () => {
    const response = await t.graphql(
      'mutation { sendMessage(input: { message: "Hi" }) { __typename } }',
      {},
      account.token,
    );
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors[0].message).toMatch(
      /Field "SendMessageInput\.to" of required type "String!"/,
    );
  });
});

describe('webhook kinds', () => {
  it('are written as enum values in GraphQL and with a dot in /v1; a bad one is the same 422', async () => {
    const graphql = await t.graphql(
      `mutation { registerWebhook(input: { url: "http://127.0.0.1:1/", events: [message_failed] }) {
        __typename ... on ValidationError { details { field issue } } } }`,
      {},
      account.token,
    );
    // The kind is taken; only the plain-http URL is refused.
    expect(graphql.body.data.registerWebhook).toEqual({
      __typename: 'ValidationError',
      details: [{ field: 'url', issue: 'invalid_format' }],
    });
    const v1 = await t.request('POST', '/v1/webhooks', {
      token: account.token,
      body: { url: 'http://127.0.0.1:1/', events: ['message.failed', 'message.sent'] },
    });
    expect(v1.status).toBe(422);
    expect(v1.body.error.details).toEqual([
      { field: 'url', issue: 'invalid_format' },
      { field: 'events.1', issue: 'invalid_value' },
    ]);
  });
});
