import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
  /** Date.now() when the body had arrived. */
  at: number;
}

/** How a path answers its n-th callback (1-based); it may do work (call the API) before answering. */
export type Behaviour = (
  n: number,
  callback: ReceivedCallback,
) => Promise<{ status: number; delayMs?: number }> | { status: number; delayMs?: number };

/** A webhook receiver on loopback: records every callback and answers as each path is told (200 by default). */
export class WebhookReceiver {
  readonly received: ReceivedCallback[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private server: http.Server | null = null;
  url = '';

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.listen();
    return receiver;
  }

  /** Sets how `path` answers from now on; `n` counts the callbacks from here. */
  on(path: string, behaviour: Behaviour): this {
    this.behaviours.set(path, behaviour);
    this.counts.set(path, 0);
    return this;
  }

  /** Sets how `path` answers and gives the URL that reaches it. */
  answerAt(path: string, behaviour: Behaviour): string {
    this.on(path, behaviour);
    return `${this.url}${path}`;
  }

  /** The callbacks `path` got, in order of arrival. */
  at(path: string): ReceivedCallback[] {
    return this.received.filter((callback) => callback.path === path);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private listen(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const path = request.url ?? '/';
        const callback: ReceivedCallback = {
          path,
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(callback);
        const n = (this.counts.get(path) ?? 0) + 1;
        this.counts.set(path, n);
        const behaviour: Behaviour = this.behaviours.get(path) ?? (() => ({ status: 200 }));
        const { status, delayMs } = await behaviour(n, callback);
        if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (!response.destroyed) response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    return new Promise((resolve) => {
      this.server!.listen(0, '127.0.0.1', () => {
        this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
        resolve();
      });
    });
  }
}
