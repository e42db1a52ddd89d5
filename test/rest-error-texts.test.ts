import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

describe('/v1 error texts', () => {
  it('names per_page as /v1 does and says the allowed range', async () => {
    const response = await t.request('GET', '/v1/messages?per_page=0', { token: alice.token });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'per_page', issue: 'invalid_value' }]);
    expect(response.body.error.message).toContain('per_page');
    expect(response.body.error.message).not.toContain('perPage');
    expect(response.body.error.message).toContain('from 1 to 100');
  });

  it('lists the allowed values of a bad status', async () => {
    const response = await t.request('GET', '/v1/messages?status=lost', { token: alice.token });
    expect(response.status).toBe(422);
    expect(response.body.error.message).toMatch(/status invalid value \(one of: .*delivered.*queued/);
  });

  it('lists the allowed event names of a bad event', async () => {
    const response = await t.request('POST', '/v1/webhooks', {
      token: alice.token,
      body: { url: 'https://example.com/hook', events: ['message.lost'] },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.message).toContain('message.delivered');
    expect(response.body.error.message).toContain('message.replied');
  });

  it('takes `to` with a leading + and stores and returns it as digits', async () => {
    const sent = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '+5511987654321', message: 'hello' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.to).toBe('5511987654321');
    const read = await t.request('GET', `/v1/messages/${sent.body.message}`, { token: alice.token });
    expect(read.body.to).toBe('5511987654321');
  });

  it('takes a contact phone with a leading + and stores it as digits', async () => {
    const campaign = await t.request('POST', '/v1/campaigns', { token: alice.token, body: { name: 'plus' } });
    const added = await t.request('POST', `/v1/campaigns/${campaign.body.campaign}/contacts`, {
      token: alice.token,
      body: { phone: '+5511987654322' },
    });
    expect(added.status).toBe(201);
    expect(added.body.phone).toBe('5511987654322');
  });

  it('says what a phone number must look like', async () => {
    const response = await t.request('POST', '/v1/messages/send', {
      token: alice.token,
      body: { to: '+55-11', message: 'hello' },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toEqual([{ field: 'to', issue: 'invalid_e164' }]);
    expect(response.body.error.message).toContain('7–15 digits, optional leading +');
  });

  it.each([
    ['To', 'to'],
    ['phone', 'to'],
    ['text', 'message'],
    ['mesage', 'message'],
  ])('suggests the known field for %s', async (wrong, right) => {
    const body: Record<string, string> = { to: '5511987654321', message: 'hello' };
    delete body[right];
    body[wrong] = right === 'to' ? '5511987654321' : 'hello';
    const response = await t.request('POST', '/v1/messages/send', { token: alice.token, body });
    expect(response.status).toBe(422);
    expect(response.body.error.details).toContainEqual({ field: wrong, issue: 'unknown_field' });
    expect(response.body.error.message).toContain(`${wrong} unknown field (did you mean \`${right}\`?)`);
  });

  it('refuses a query parameter the route does not take, naming it as an unknown body field is named', async () => {
    const misspelt = await t.request('GET', '/v1/messages?per_pgae=5', { token: alice.token });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.error.code).toBe('validation_error');
    expect(misspelt.body.error.details).toEqual([{ field: 'per_pgae', issue: 'unknown_field' }]);
    expect(misspelt.body.error.message).toContain('per_pgae unknown field (did you mean `per_page`?)');

    // A route that takes no query string at all, and a bad value beside the stranger: both named.
    const none = await t.request('GET', '/v1/settings?verbose=1', { token: alice.token });
    expect(none.status).toBe(422);
    expect(none.body.error.details).toEqual([{ field: 'verbose', issue: 'unknown_field' }]);
    const both = await t.request('GET', '/v1/messages?status=lost&sort=name', { token: alice.token });
    expect(both.status).toBe(422);
    expect(both.body.error.details).toEqual([
      { field: 'status', issue: 'invalid_value' },
      { field: 'sort', issue: 'unknown_field' },
    ]);
  });

  it('says a webhook replay needs since or event', async () => {
    const response = await t.request('POST', '/v1/webhooks/whk_missing/replay', {
      token: alice.token,
      body: {},
    });
    expect(response.status).toBe(422);
    expect(response.body.error.message).toBe('One of `since` or `event` is required');
  });

  it('names the CSRF header a GraphQL GET lacks', async () => {
    const response = await t.request('GET', '/graphql?query=%7B__typename%7D');
    expect(response.status).toBe(403);
    expect(JSON.stringify(response.body)).toContain('X-Tern-CSRF');
  });

  it('marks a replayed idempotent send with Idempotent-Replayed: true', async () => {
    const send = () =>
      t.request('POST', '/v1/messages/send', {
        token: alice.token,
        headers: { 'idempotency-key': 'replay-mark' },
        body: { to: '5511987654323', message: 'once' },
      });
    const first = await send();
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body).not.toHaveProperty('replayed');
    const second = await send();
    expect(second.status).toBe(202);
    expect(second.body.message).toBe(first.body.message);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });
});
