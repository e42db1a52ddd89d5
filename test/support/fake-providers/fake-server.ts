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
 * What the fake does with a request instead of its usual answer: another answer, or `hang`: it
 * takes the request as usual (the provider acts on it) and never answers, as a provider whose
 * answer is lost on the way back.
 */
export type QueuedBehaviour = FakeAnswer | 'hang';

/**
 * A provider's API on loopback: records every request and answers it with the provider's wire
 * format (the subclass's `respond`), unless a test queued other answers with `answerNext`.
 */
export abstract class FakeProviderServer {
  readonly received: ReceivedRequest[] = [];
  private readonly queued: QueuedBehaviour[] = [];
  private readonly hanging = new Set<http.ServerResponse>();
  private server: http.Server | null = null;
  url = '';

  protected abstract respond(request: ReceivedRequest): FakeAnswer;

  /** The next requests get these answers, in order, whatever they ask. */
  answerNext(...answers: QueuedBehaviour[]): void {
    this.queued.push(...answers);
  }

  /** The next request is taken as usual and never answered (until the server closes). */
  hangNext(): void {
    this.queued.push('hang');
  }

  /** The requests received at `path` (its query left out). */
  requestsTo(path: string): ReceivedRequest[] {
    return this.received.filter((request) => request.path.split('?')[0] === path);
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
        const queued = this.queued.shift();
        if (queued === 'hang') {
          this.respond(received);
          this.hanging.add(response);
          return;
        }
        const answer = queued ?? this.respond(received);
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
    for (const response of this.hanging) response.destroy();
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

/**
 * An address that refuses connections: nothing serves port 1 (tcpmux) here. A port freed by a
 * test could be taken by a server of a file running beside it and answer.
 */
export const REFUSING_ADDRESS = '127.0.0.1:1';
