import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  ProviderCallback,
  ProviderRequest,
  ProviderResponse,
} from '../../../src/carriers/http/http-provider.js';

export interface ReceivedRequest {
  method: string;
  /** Path and query, as the client sent them. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
}

export interface FakeAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** How the fake answers one request: the provider's documented answer, or one it was told to give. */
export type Responder = (request: ReceivedRequest) => FakeAnswer;

/**
 * A provider's API on loopback: records every request and answers it with the provider's wire
 * format (the subclass's `respond`), unless a test queued other answers with `answerNext`.
 */
export abstract class FakeProviderServer {
  readonly received: ReceivedRequest[] = [];
  private readonly queued: FakeAnswer[] = [];
  private server: http.Server | null = null;
  url = '';

  protected abstract respond(request: ReceivedRequest): FakeAnswer;

  /** The next requests get these answers, in order, whatever they ask. */
  answerNext(...answers: FakeAnswer[]): void {
    this.queued.push(...answers);
  }

  /** Performs a provider request against this server, as the HTTP carrier would, over real HTTP. */
  static async perform(request: ProviderRequest): Promise<ProviderResponse> {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.text(),
    };
  }

  async listen(): Promise<this> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? 'GET',
          path: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.received.push(received);
        const answer = this.queued.shift() ?? this.respond(received);
        const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        response
          .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
          .end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * The receiving end of a provider's callbacks on loopback: records each call as Tern's endpoint
 * would hand it to the provider module (URL, method, headers, raw body).
 */
export class CallbackCatcher {
  readonly calls: ProviderCallback[] = [];
  private server: http.Server | null = null;
  url = '';

  async listen(): Promise<this> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.calls.push({
          url: `${this.url}${request.url ?? '/'}`,
          method: request.method ?? 'GET',
          headers: request.headers,
          rawBody: Buffer.concat(chunks),
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The last call received (the fake's send resolves once the catcher answered it). */
  last(): ProviderCallback {
    const call = this.calls.at(-1);
    if (!call) throw new Error('no callback received');
    return call;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
