import type { DeliveryReport, InboundSms, OutboundSms } from '../carrier.js';

/**
 * One HTTP messaging provider (Twilio, Vonage, Infobip, the Android gateway app, a generic
 * template): how a message becomes the provider's request, how its answer reads, and how its
 * callbacks are verified and read. Pure: the shared HTTP carrier (http-carrier.ts) does the I/O,
 * the timeouts and the outcome rules, so that a new provider is one file and its test.
 */
export interface HttpProvider {
  /** The URL scheme and the name `carriers list` shows as the carrier's kind. */
  readonly kind: string;
  /** True when the provider takes our reference and refuses a second message with it. */
  readonly deduplicatesByReference: boolean;
  /** The request that hands over one message (the provider cuts long texts itself). */
  request(sms: OutboundSms, context: SendContext): ProviderRequest;
  /**
   * What the provider's answer to that request means. `sms` is the message it carried: a provider
   * that answers a repeated reference with "I have it already" (the Android app's 409) is then
   * read as having taken it, under our reference.
   */
  answer(response: ProviderResponse, sms: OutboundSms): ProviderAnswer;
  /**
   * Requests made when the carrier starts, each safe to repeat (the Android app's webhooks, which
   * Tern registers itself); none for providers told per message or by the operator.
   */
  startRequests?(context: SendContext): ProviderRequest[];
  /** Whether a callback comes from the provider (its signature, or the secret in its path). */
  verify(call: ProviderCallback, now: Date): boolean;
  /**
   * The delivery reports and replies a verified callback carries (none for a call it ignores);
   * `now` is their time when the provider gives none.
   */
  events(call: ProviderCallback, now: Date): ProviderEvent[];
}

export interface SendContext {
  /** Where the provider should send this message's reports: PUBLIC_URL + /carriers/{name}/events…, or null. */
  callbackUrl: string | null;
  /** The time of the request, by Tern's clock (for a validity counted from now). */
  now: Date;
}

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ProviderResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type ProviderAnswer =
  /** The provider took it; its id for the message. */
  | { outcome: 'accepted'; providerMessageId: string }
  /** Refused for good: the message fails with `carrier_<code>` and the provider's text. */
  | { outcome: 'rejected'; code: string; message: string }
  /** Not now (429, 5xx): the route's next carrier may take it. */
  | { outcome: 'temporary'; message: string };

/** A call to POST /carriers/{name}/events, as it reached Tern. */
export interface ProviderCallback {
  /** The URL the provider called, as it knows it: PUBLIC_URL + path + query. */
  url: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export type ProviderEvent = { kind: 'report'; report: DeliveryReport } | { kind: 'reply'; reply: InboundSms };

/** What a provider is made with, from the carrier's record. */
export interface ProviderSettings {
  /** The carrier's name: its callback path is /carriers/{carrier}/events. */
  carrier: string;
  /** The carrier's URL as stored (without its secret): scheme, user, host, query options. */
  url: URL;
  /** Where its API is: `https://host[:port]`, or `http://` with the option `tls=false`. */
  baseUrl: string;
  /** The URL's secret (auth token, API secret, API key or password), opened; '' when none. */
  secret: string;
  /**
   * The query options its kind declares secret (providers.ts: Vonage's signature_secret), opened
   * and by name: they are not in `url`, which is stored and shown.
   */
  secretOptions: Readonly<Record<string, string>>;
  /**
   * A secret Tern made when the carrier was added: in the callback path of providers that sign
   * nothing (Infobip, the generic template), and the Android app's webhook signing key.
   */
  callbackSecret: string;
}
