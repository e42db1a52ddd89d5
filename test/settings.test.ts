import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsDocument, TernClient, UpdateSettingsDocument } from '../src/client/index.js';
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

describe('GET /v1/settings', () => {
  it('answers the defaults for a new account: UTC, no sender, two-factor off', async () => {
    const response = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      account: alice.account,
      timezone: 'UTC',
      default_sender: null,
      two_factor_enabled: false,
      send_window: null,
      message_validity: 86400,
      limits: { daily_segments: null, monthly_segments: null, allowed_countries: [], timezone: 'UTC' },
      usage: { today_segments: 0, month_segments: 0 },
      senders: [],
      request: response.headers.get('x-request-id'),
    });
  });
});

describe('PATCH /v1/settings', () => {
  it('changes the time zone and the default sender, and GET shows them', async () => {
    const patched = await t.request('PATCH', '/v1/settings', {
      token: alice.token,
      body: { timezone: 'America/Sao_Paulo', default_sender: 'TernCo' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      account: alice.account,
      timezone: 'America/Sao_Paulo',
      default_sender: 'TernCo',
    });

    const read = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(read.body).toMatchObject({ timezone: 'America/Sao_Paulo', default_sender: 'TernCo' });
  });

  it('changes only the fields sent, and null clears the default sender', async () => {
    await t.request('PATCH', '/v1/settings', { token: alice.token, body: { default_sender: '5511999' } });
    let read = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(read.body).toMatchObject({ timezone: 'America/Sao_Paulo', default_sender: '5511999' });

    await t.request('PATCH', '/v1/settings', { token: alice.token, body: { default_sender: null } });
    read = await t.request('GET', '/v1/settings', { token: alice.token });
    expect(read.body).toMatchObject({ timezone: 'America/Sao_Paulo', default_sender: null });
  });

  it('never touches another account', async () => {
    await t.request('PATCH', '/v1/settings', { token: alice.token, body: { timezone: 'Asia/Tokyo' } });
    const bobs = await t.request('GET', '/v1/settings', { token: bob.token });
    expect(bobs.body).toMatchObject({ account: bob.account, timezone: 'UTC', default_sender: null });
  });

  it.each([
    [{ timezone: 'Mars/Olympus_Mons' }, [{ field: 'timezone', issue: 'invalid_value' }]],
    [{ timezone: '' }, [{ field: 'timezone', issue: 'invalid_value' }]],
    [{ default_sender: 'ab' }, [{ field: 'default_sender', issue: 'invalid_format' }]],
    [{ default_sender: 'Twelve_chars' }, [{ field: 'default_sender', issue: 'invalid_format' }]],
    [{ default_sender: '1234567890123456' }, [{ field: 'default_sender', issue: 'invalid_format' }]],
    [
      { timezone: 'Nowhere/City', default_sender: 'a b' },
      [
        { field: 'timezone', issue: 'invalid_value' },
        { field: 'default_sender', issue: 'invalid_format' },
      ],
    ],
    [{ timezone: 5 }, [{ field: 'timezone', issue: 'invalid_value' }]],
    [{ two_factor: true }, [{ field: 'two_factor', issue: 'unknown_field' }]],
  ])('refuses %j with 422 and the details %j, changing nothing', async (body, details) => {
    const before = await t.request('GET', '/v1/settings', { token: bob.token });
    const response = await t.request('PATCH', '/v1/settings', { token: bob.token, body });
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({ code: 'validation_error', message: expect.any(String), details });
    const after = await t.request('GET', '/v1/settings', { token: bob.token });
    expect({ ...after.body, request: null }).toEqual({ ...before.body, request: null });
  });

  it('accepts an empty body as no change', async () => {
    const response = await t.request('PATCH', '/v1/settings', { token: bob.token, body: {} });
    expect(response.status).toBe(200);
    expect(response.body.timezone).toBe('UTC');
  });
});

describe('settings through GraphQL', () => {
  it('returns the same data as /v1, through the typed client documents', async () => {
    const client = new TernClient({ url: `${t.url}/graphql`, token: alice.token });
    const updated = await client.request(UpdateSettingsDocument, {
      input: { timezone: 'Europe/Lisbon', defaultSender: 'Tern' },
    });
    expect(updated.update_settings).toMatchObject({ timezone: 'Europe/Lisbon', default_sender: 'Tern' });

    const graphql = await client.request(SettingsDocument, {});
    const rest = await t.request('GET', '/v1/settings', { token: alice.token });
    const { request: _request, ...restData } = rest.body;
    expect(withoutTypenames(graphql.settings)).toEqual(restData);
  });

  it('returns a typed ValidationError with the same details', async () => {
    const client = new TernClient({ url: `${t.url}/graphql`, token: alice.token });
    const result = await client.request(UpdateSettingsDocument, { input: { timezone: 'Nowhere/City' } });
    expect(result.update_settings).toMatchObject({
      __typename: 'ValidationError',
      error_code: 'validation_error',
      error_details: [{ field: 'timezone', issue: 'invalid_value' }],
    });
  });
});
