import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A loopback HTTP SMS provider of no particular brand, for the generic template: POST
// /api/v1/sms with a JSON body and a bearer token, {"message_id"} when taken, {"error":{"code"}}
// with a 4xx when refused, and {"status":"REJECTED"} with a 200 for what it refuses politely.

export const GENERIC_TOKEN = 'generic-token-123';

export interface GenericMessage {
  id: string;
  body: Record<string, string>;
}

export type GenericBehaviour = { kind: 'accept' } | { kind: 'answer'; status: number; body: unknown };

/** A template for this provider, as an operator would write it (docs/carriers.md). */
export const GENERIC_TEMPLATE = {
  request: {
    method: 'POST',
    url: '/api/v1/sms',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer {password}' },
    body: '{"to":"{to_plus}","from":"{from}","text":"{text}","client_ref":"{reference}","report_url":"{callback_url}"}',
  },
  answer: {
    id: { json_pointer: '/message_id' },
    rejected_body: '"status":\\s*"REJECTED"',
    error_code: { json_pointer: '/error/code' },
  },
  report: {
    id: 'message_id',
    status: 'status',
    reference: 'client_ref',
    error_code: 'error_code',
    delivered: ['DELIVRD'],
    failed: ['UNDELIV', 'REJECTD', 'EXPIRED'],
  },
};

/**
 * The Kannel-style template of docs/carriers.md: GET /cgi-bin/sendsms, an answer without an id,
 * and a delivery report called back by GET with our reference and Kannel's DLR type (%d).
 */
export const KANNEL_TEMPLATE = {
  request: {
    method: 'GET',
    url: '/cgi-bin/sendsms?username={username}&password={password}&to={to_plus}&from={from}&text={text}&dlr-mask=19&dlr-url={callback_url}%3Fref%3D{reference}%26type%3D%25d',
  },
  answer: { id: { use_reference: true }, rejected_body: '^[1-9][0-9]*:' },
  report: { id: 'ref', status: 'type', delivered: ['1'], failed: ['2', '16'] },
};

export class FakeGeneric {
  readonly messages: GenericMessage[] = [];
  /** What reached /cgi-bin/sendsms (Kannel's interface): each request's query. */
  readonly kannel: URLSearchParams[] = [];
  requests = 0;
  private behaviours: GenericBehaviour[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeGeneric> {
    let fake: FakeGeneric | null = null;
    const server = createServer((request, response) => void fake!.handle(request, response));
    fake = new FakeGeneric(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  url(): string {
    return `http://acme:${GENERIC_TOKEN}@127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answerNext(...behaviours: GenericBehaviour[]): void {
    this.behaviours.push(...behaviours);
  }

  message(to: string): GenericMessage | undefined {
    return this.messages.find((message) => message.body.to === to);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (request.method === 'GET' && request.url?.startsWith('/cgi-bin/sendsms?')) {
      const query = new URL(request.url, 'http://kannel').searchParams;
      if (query.get('password') !== GENERIC_TOKEN)
        return void response.writeHead(403).end('Authorization failed for sendsms');
      this.kannel.push(query);
      return void response.writeHead(202, { 'content-type': 'text/plain' }).end('0: Accepted for delivery');
    }
    if (request.method !== 'POST' || request.url !== '/api/v1/sms')
      return answer(404, { error: { code: 'NOT_FOUND' } });
    if (request.headers.authorization !== `Bearer ${GENERIC_TOKEN}`)
      return answer(401, { error: { code: 'UNAUTHORIZED' } });
    this.requests += 1;
    const behaviour = this.behaviours.shift() ?? { kind: 'accept' };
    if (behaviour.kind === 'answer') return answer(behaviour.status, behaviour.body);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
    const id = randomBytes(8).toString('hex');
    this.messages.push({ id, body });
    answer(200, { message_id: id, status: 'ACCEPTED' });
  }
}
