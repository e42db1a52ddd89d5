import { describe, expect, it } from 'vitest';
import { createGenericProvider } from '../../src/carriers/http/generic.js';
import { queryOption, statusAnswer } from '../../src/carriers/http/http-answers.js';
import type { ProviderSettings } from '../../src/carriers/http/http-provider.js';
import { createTwilioProvider } from '../../src/carriers/http/twilio.js';

const SMS = {
  reference: 'msg_1',
  to: '447700900001',
  text: 'He said "hi" & left\nbye',
  encoding: 'GSM-7' as const,
  segments: 1,
  from: null,
  validUntil: new Date('2026-01-01T01:00:00Z'),
};
const CONTEXT = {
  callbackUrl: 'https://tern.example.com/carriers/c/events/s3cret',
  now: new Date('2026-01-01T00:00:00Z'),
};

function settings(url: string, secret = 'token'): ProviderSettings {
  const parsed = new URL(url);
  return {
    carrier: 'c',
    url: parsed,
    baseUrl: 'https://api.example.com',
    secret,
    secretOptions: {},
    callbackSecret: 's3cret',
  };
}

const response = (status: number, body: unknown) => ({
  status,
  headers: {},
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('the outcome of an HTTP status', () => {
  it.each([
    [400, 'rejected'],
    [404, 'rejected'],
    [422, 'rejected'],
    [408, 'temporary'],
    [429, 'temporary'],
    [500, 'temporary'],
    [503, 'temporary'],
  ])('%i is %s', (status, outcome) => {
    expect(statusAnswer(status, null, 'x').outcome).toBe(outcome);
  });

  it('names the provider code in a form fit for carrier_<code>', () => {
    expect(statusAnswer(400, 'bad number/€', 'x')).toEqual({
      outcome: 'rejected',
      code: 'bad_number__',
      message: 'x',
    });
  });
});

describe('query options', () => {
  it('keep a + as a plus', () => {
    expect(queryOption(new URL('twilio://a@h?from=+15550001111&x=%2B1'), 'from')).toBe('+15550001111');
    expect(queryOption(new URL('twilio://a@h?from=+15550001111&x=%2B1'), 'x')).toBe('+1');
    expect(queryOption(new URL('twilio://a@h?x=1'), 'from')).toBeNull();
  });
});

describe('the Twilio request and answer', () => {
  const twilio = createTwilioProvider(
    settings(`twilio://AC${'a'.repeat(32)}@api.twilio.com?messaging_service=MG${'b'.repeat(32)}`),
  );

  it('sends through a Messaging Service, with the validity left in seconds and our reference in the callback', () => {
    const request = twilio.request(SMS, CONTEXT);
    const form = new URLSearchParams(request.body);
    expect(request.url).toBe(`https://api.example.com/2010-04-01/Accounts/AC${'a'.repeat(32)}/Messages.json`);
    expect(Object.fromEntries(form)).toEqual({
      To: '+447700900001',
      Body: SMS.text,
      MessagingServiceSid: `MG${'b'.repeat(32)}`,
      StatusCallback: `${CONTEXT.callbackUrl}?ref=msg_1`,
      ValidityPeriod: '3600',
    });
  });

  it('reads its answers', () => {
    expect(twilio.answer(response(201, { sid: 'SM1' }), SMS)).toEqual({
      outcome: 'accepted',
      providerMessageId: 'SM1',
    });
    expect(
      twilio.answer(response(400, { code: 21610, message: 'Unsubscribed recipient', status: 400 }), SMS),
    ).toEqual({
      outcome: 'rejected',
      code: '21610',
      message: 'Unsubscribed recipient',
    });
    expect(twilio.answer(response(201, {}), SMS).outcome).toBe('temporary');
    expect(twilio.answer(response(502, '<html>bad gateway</html>'), SMS).outcome).toBe('temporary');
  });
});

describe('the generic template', () => {
  const template = (request: object) => JSON.stringify({ request, answer: { id: { regex: 'ID: (\\w+)' } } });

  it('escapes each placeholder for where it stands', () => {
    const json = createGenericProvider(
      settings('https://acme@sms.example.com'),
      template({
        method: 'POST',
        url: '/send?to={to_plus}&cb={callback_url}',
        headers: { 'Content-Type': 'application/json', 'X-Key': '{password}' },
        body: '{"text":"{text}","ref":"{reference}"}',
      }),
    ).request(SMS, CONTEXT);
    expect(json.url).toBe(
      `https://api.example.com/send?to=%2B447700900001&cb=${encodeURIComponent(CONTEXT.callbackUrl)}`,
    );
    expect(json.headers['X-Key']).toBe('token');
    expect(JSON.parse(json.body!)).toEqual({ text: SMS.text, ref: 'msg_1' });
    const form = createGenericProvider(
      settings('https://acme@sms.example.com'),
      template({
        method: 'POST',
        url: '/send',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'user={username}&text={text}',
      }),
    ).request(SMS, CONTEXT);
    expect(Object.fromEntries(new URLSearchParams(form.body))).toEqual({ user: 'acme', text: SMS.text });
  });

  it('reads the id with a regex, and a 4xx as a refusal with the HTTP status for code', () => {
    const provider = createGenericProvider(
      settings('https://sms.example.com'),
      template({ method: 'GET', url: '/' }),
    );
    expect(provider.answer(response(200, 'OK ID: abc123'), SMS)).toEqual({
      outcome: 'accepted',
      providerMessageId: 'abc123',
    });
    expect(provider.answer(response(403, 'Forbidden'), SMS)).toMatchObject({
      outcome: 'rejected',
      code: '403',
    });
  });

  it('reads a 2xx body as a refusal for good or for now, as Kannel reads its regexes', () => {
    const provider = createGenericProvider(
      settings('https://sms.example.com'),
      JSON.stringify({
        request: { method: 'GET', url: '/' },
        answer: { id: { regex: 'ID: (\\w+)' }, rejected_body: 'failure', temporary_body: 'retry later' },
      }),
    );
    expect(provider.answer(response(200, 'failure: unknown number'), SMS)).toMatchObject({
      outcome: 'rejected',
      code: 'rejected',
    });
    expect(provider.answer(response(200, 'retry later'), SMS).outcome).toBe('temporary');
  });
});
