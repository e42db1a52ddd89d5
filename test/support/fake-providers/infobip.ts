import { randomUUID } from 'node:crypto';
import { type FakeAnswer, FakeProviderServer, type ReceivedRequest } from './fake-server.js';

/** A status object as Infobip's answers and reports carry it. */
export interface InfobipStatus {
  groupId: number;
  groupName: string;
  id: number;
  name: string;
  description: string;
}

/** Statuses of Infobip's "Response status and error codes" reference. */
export const INFOBIP_STATUSES = {
  pendingAccepted: {
    groupId: 1,
    groupName: 'PENDING',
    id: 26,
    name: 'PENDING_ACCEPTED',
    description: 'Message sent to next instance',
  },
  deliveredToHandset: {
    groupId: 3,
    groupName: 'DELIVERED',
    id: 5,
    name: 'DELIVERED_TO_HANDSET',
    description: 'Message delivered to handset',
  },
  undeliverable: {
    groupId: 2,
    groupName: 'UNDELIVERABLE',
    id: 4,
    name: 'UNDELIVERABLE_REJECTED_OPERATOR',
    description: 'Message rejected by operator',
  },
  expired: {
    groupId: 4,
    groupName: 'EXPIRED',
    id: 15,
    name: 'EXPIRED_EXPIRED',
    description: 'Message expired',
  },
  rejectedDestination: {
    groupId: 5,
    groupName: 'REJECTED',
    id: 51,
    name: 'REJECTED_DESTINATION',
    description: 'Invalid destination address.',
  },
  rejectedNoCredit: {
    groupId: 5,
    groupName: 'REJECTED',
    id: 12,
    name: 'REJECTED_NOT_ENOUGH_CREDITS',
    description: 'Not enough credits',
  },
} satisfies Record<string, InfobipStatus>;

/** Infobip's SMS API on loopback: POST /sms/2/text/advanced, and its JSON reports and inbound messages. */
export class FakeInfobip extends FakeProviderServer {
  constructor(private readonly apiKey: string) {
    super();
  }

  static start(apiKey: string): Promise<FakeInfobip> {
    return new FakeInfobip(apiKey).listen();
  }

  /** The body of the latest send. */
  lastSend(): { messages: Record<string, unknown>[] } {
    const send = this.received.filter((request) => request.path === '/sms/2/text/advanced').at(-1);
    if (!send) throw new Error('no send received');
    return JSON.parse(send.body);
  }

  /** The next send is answered 200 with this status for its destination. */
  statusNext(status: InfobipStatus): void {
    this.answerNext({
      status: 200,
      body: { messages: [{ to: '447700900000', status, messageId: randomUUID(), smsCount: 1 }] },
    });
  }

  /** The next send is refused for now, with Infobip's error body: 429 past the rate limit, 503 while down. */
  refuseForNowNext(status: 429 | 503): void {
    const [messageId, text] =
      status === 429
        ? ['TOO_MANY_REQUESTS', 'Too many requests']
        : ['GENERAL_ERROR', 'Something went wrong. Please contact support.'];
    this.answerNext({ status, body: { requestError: { serviceException: { messageId, text } } } });
  }

  protected respond(request: ReceivedRequest): FakeAnswer {
    if (request.method !== 'POST' || request.path !== '/sms/2/text/advanced')
      return { status: 404, body: {} };
    if (request.headers.authorization !== `App ${this.apiKey}`)
      return {
        status: 401,
        body: {
          requestError: { serviceException: { messageId: 'UNAUTHORIZED', text: 'Invalid login details' } },
        },
      };
    const { messages } = JSON.parse(request.body) as {
      messages: { destinations: { to: string; messageId?: string }[]; text?: string }[];
    };
    const sent = messages.flatMap((message) =>
      message.destinations.map((destination) => ({
        to: destination.to,
        status: INFOBIP_STATUSES.pendingAccepted,
        messageId: destination.messageId ?? randomUUID(),
        smsCount: 1,
      })),
    );
    return { status: 200, body: { messages: sent } };
  }

  /** A delivery report as Infobip posts it to the message's notifyUrl (JSON). */
  async sendReport(
    url: string,
    fields: {
      messageId: string;
      callbackData?: string;
      status: InfobipStatus;
      error?: Record<string, unknown>;
    },
  ): Promise<number> {
    const result = {
      bulkId: 'BULK-ID-123-xyz',
      messageId: fields.messageId,
      to: '447700900000',
      sentAt: '2026-11-25T13:00:00.000+0000',
      doneAt: '2026-11-25T13:00:04.000+0000',
      smsCount: 1,
      mccMnc: '23410',
      price: { pricePerMessage: 0.01, currency: 'EUR' },
      ...(fields.callbackData ? { callbackData: fields.callbackData } : {}),
      status: fields.status,
      error: fields.error ?? {
        groupId: 0,
        groupName: 'OK',
        id: 0,
        name: 'NO_ERROR',
        description: 'No Error',
        permanent: false,
      },
    };
    return this.post(url, { results: [result] });
  }

  /** An inbound message as Infobip forwards it to the URL set on the number. */
  async sendInbound(url: string, fields: { from: string; to: string; text: string }): Promise<number> {
    const keyword = fields.text.split(' ')[0]!.toUpperCase();
    const result = {
      messageId: randomUUID(),
      from: fields.from,
      to: fields.to,
      text: fields.text,
      cleanText: fields.text.slice(keyword.length).trim(),
      keyword,
      receivedAt: '2026-11-25T13:05:00.000+0000',
      smsCount: 1,
      price: { pricePerMessage: 0, currency: 'EUR' },
      callbackData: null,
    };
    return this.post(url, { results: [result], messageCount: 1, pendingMessageCount: 0 });
  }

  private async post(url: string, body: unknown): Promise<number> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.body?.cancel();
    return response.status;
  }
}
