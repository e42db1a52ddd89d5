import { Agent, request } from 'undici';
import type { ProviderRequest, ProviderResponse } from './http-provider.js';

/**
 * The exchange failed. `requestSent` when the request may have reached the provider (its answer
 * timed out, the connection dropped mid-answer): the message may have been taken. Otherwise it
 * never left (refused connection, no such host, connect timeout, a certificate refused).
 */
export class ProviderExchangeError extends Error {
  constructor(
    message: string,
    readonly requestSent: boolean,
  ) {
    super(message);
    this.name = 'ProviderExchangeError';
  }
}

export interface ProviderClientLimits {
  /** How long the provider may take to answer once the request is out. */
  answerTimeoutMs: number;
  connectTimeoutMs: number;
  /** The most of an answer's body read; a longer answer is a failed exchange. */
  maxAnswerBytes: number;
}

// Errors raised before a byte of the request was written: the provider cannot have taken it.
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function wasSent(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return true;
  if (NOT_SENT.has(code)) return false;
  // A certificate refused by TLS: the handshake failed before the request.
  return !(code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'ERR_SSL_WRONG_VERSION_NUMBER');
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * The one HTTP client every HTTP carrier sends through: keep-alive connections per origin
 * (undici's Agent), a connect timeout, an answer timeout, and a bounded answer body.
 */
export class ProviderClient {
  private readonly agent: Agent;

  constructor(private readonly limits: ProviderClientLimits) {
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connect: { timeout: limits.connectTimeoutMs },
      headersTimeout: limits.answerTimeoutMs,
      bodyTimeout: limits.answerTimeoutMs,
    });
  }

  /** The provider's answer, whatever its status; ProviderExchangeError when none came whole. */
  async exchange(call: ProviderRequest): Promise<ProviderResponse> {
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(call.url, {
        dispatcher: this.agent,
        method: call.method,
        headers: call.headers,
        body: call.body ?? null,
      });
    } catch (error) {
      throw new ProviderExchangeError(describe(error), wasSent(error));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > this.limits.maxAnswerBytes) {
          response.body.destroy();
          throw new ProviderExchangeError(`an answer over ${this.limits.maxAnswerBytes} bytes`, true);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof ProviderExchangeError) throw error;
      throw new ProviderExchangeError(describe(error), true);
    }
    return {
      status: response.statusCode,
      headers: response.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
