import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  type DestinationPolicy,
  DestinationRefusedError,
  type Resolve,
  resolveDestination,
  systemResolve,
} from './webhook-destination.js';
import { signatureHeaders } from './webhook-signature.js';

// Enough to see the receiver is alive; more is not read, so a receiver cannot make Tern buffer it.
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'Tern-Webhooks/1';

export interface WebhookSenderOptions extends DestinationPolicy {
  timeoutMs: number;
  resolve?: Resolve;
}

/** What one attempt came to, as the delivery log records it. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The destination may not be called at all: retrying cannot help. */
  refused: boolean;
}

/**
 * Makes one signed callback: resolves and checks the destination, POSTs the body with a fresh
 * timestamp, and reports the outcome; it never throws. The whole attempt, lookup included, has
 * `timeoutMs`; redirects are not followed (a 3xx is a failure).
 */
export class WebhookSender {
  private readonly resolve: Resolve;
  // Connections are pooled per checked address (the request names the IP, not the host), so a
  // reused connection always goes to an address that passed the check.
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxFreeSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxFreeSockets: 64 }),
  };

  constructor(private readonly options: WebhookSenderOptions) {
    this.resolve = options.resolve ?? systemResolve;
  }

  async send(url: string, body: string, secret: string, now: Date): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let timer: NodeJS.Timeout | undefined;
    let cancel = () => {};
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cancel();
        reject(new Error(`no answer within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
    });
    try {
      const target = new URL(url);
      const address = await Promise.race([resolveDestination(target, this.options, this.resolve), deadline]);
      const request = this.post(target, address, body, signatureHeaders(secret, body, now));
      cancel = request.cancel;
      const statusCode = await Promise.race([request.status, deadline]);
      const ok = statusCode >= 200 && statusCode < 300;
      const error = ok
        ? null
        : statusCode >= 300 && statusCode < 400
          ? `HTTP ${statusCode}: redirects are not followed`
          : `HTTP ${statusCode}`;
      return { ok, statusCode, durationMs: elapsed(), error, refused: false };
    } catch (error) {
      return {
        ok: false,
        statusCode: null,
        durationMs: elapsed(),
        error: describe(error),
        refused: error instanceof DestinationRefusedError,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  private post(
    url: URL,
    address: string,
    body: string,
    signed: Record<string, string>,
  ): { status: Promise<number>; cancel(): void } {
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const request = (secure ? https : http).request({
      host: address,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: this.agents[secure ? 'https:' : 'http:'],
      // TLS checks the certificate against the URL's host, not the address connected to.
      ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': USER_AGENT,
        ...signed,
      },
    });
    const status = new Promise<number>((resolve, reject) => {
      request.on('error', reject);
      request.on('response', (response) => {
        resolve(response.statusCode ?? 0);
        // The status decides the attempt; the rest is drained, within limits, so the connection can be reused.
        const drain = setTimeout(() => request.destroy(), this.options.timeoutMs).unref();
        response.on('close', () => clearTimeout(drain));
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        response.on('error', () => undefined);
      });
    });
    // A cancelled request rejects after the attempt has been decided; that is expected.
    status.catch(() => undefined);
    request.end(body);
    return { status, cancel: () => request.destroy() };
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host not found (${code})`;
  if (code === 'ECONNRESET') return 'connection reset';
  return error.message || code || error.name;
}
