import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { PollingLoop } from '../../jobs/polling-loop.js';
import type { Clock } from '../../lib/clock.js';
import {
  type Carrier,
  type CarrierEventSink,
  type CarrierHealth,
  CarrierRejectedError,
  CarrierUnavailableError,
  type OutboundSms,
  type SubmitResult,
} from '../carrier.js';
import { CallbackEvents } from './callback-events.js';
import type { HttpProvider, SendContext } from './http-provider.js';
import { ProviderClient, type ProviderClientLimits, ProviderExchangeError } from './provider-client.js';

export interface HttpCarrierOptions extends ProviderClientLimits {
  name: string;
  provider: HttpProvider;
  /** PUBLIC_URL + this carrier's callback path; null when PUBLIC_URL is not set. */
  callbackUrl: string | null;
  /** How often stored callbacks that could not be applied yet are tried again. */
  pollMs: number;
}

type ErrorKind = 'rejected' | 'temporary' | 'unreachable' | 'outcome_unknown' | 'start_failed';

/**
 * A carrier reached over HTTP: its provider (http-provider.ts) makes each request and reads each
 * answer; this class does the exchange through the shared client and applies Tern's outcome
 * rules. A 2xx with an id is sent; a refusal for good fails the message (no failover); 429, 5xx
 * or a request that never left are for the next carrier; no answer to a request that went out
 * leaves the outcome unknown, and the message stays with this carrier.
 */
export class HttpCarrier implements Carrier {
  readonly name: string;
  readonly deduplicatesByReference: boolean;
  private readonly provider: HttpProvider;
  private readonly client: ProviderClient;
  private readonly callbackUrl: string | null;
  private readonly events: CallbackEvents;
  private readonly loop: PollingLoop;
  private sink: CarrierEventSink | null = null;
  private lastError: string | null = null;
  private readonly errors: Record<ErrorKind, number> = {
    rejected: 0,
    temporary: 0,
    unreachable: 0,
    outcome_unknown: 0,
    start_failed: 0,
  };

  constructor(
    prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: HttpCarrierOptions,
  ) {
    this.name = options.name;
    this.provider = options.provider;
    this.deduplicatesByReference = options.provider.deduplicatesByReference;
    this.client = new ProviderClient(options);
    this.callbackUrl = options.callbackUrl;
    this.events = new CallbackEvents(prisma, clock);
    this.loop = new PollingLoop({
      step: () => (this.sink ? this.events.applyPending(this.name, this.sink) : Promise.resolve(0)),
      batch: Number.POSITIVE_INFINITY,
      pollMs: options.pollMs,
      logger,
      failure: 'stored carrier callbacks could not be applied',
    });
  }

  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.loop.start();
    for (const call of this.provider.startRequests?.(this.context()) ?? []) {
      try {
        const response = await this.client.exchange(call);
        if (response.status >= 300)
          throw new Error(`HTTP ${response.status}: ${response.body.slice(0, 200)}`);
      } catch (error) {
        // Sends do not depend on it; the next start (a process, a changed URL) tries again.
        this.note('start_failed', `set-up request to the provider failed: ${(error as Error).message}`);
        this.logger.warn({ err: error }, 'HTTP carrier set-up request failed');
      }
    }
  }

  async send(message: OutboundSms): Promise<SubmitResult> {
    let response: Awaited<ReturnType<ProviderClient['exchange']>>;
    try {
      response = await this.client.exchange(this.provider.request(message, this.context()));
    } catch (error) {
      if (!(error instanceof ProviderExchangeError)) throw error;
      if (!error.requestSent) {
        this.note('unreachable', error.message);
        throw new CarrierUnavailableError(`${this.name} unreachable: ${error.message}`);
      }
      this.note('outcome_unknown', `no answer to a request that went out: ${error.message}`);
      throw new CarrierUnavailableError(`${this.name} did not answer: ${error.message}`, true);
    }
    const answer = this.provider.answer(response, message);
    if (answer.outcome === 'accepted') return { carrierMessageId: answer.providerMessageId };
    if (answer.outcome === 'rejected') {
      this.note('rejected', `carrier_${answer.code}: ${answer.message}`);
      throw new CarrierRejectedError(`carrier_${answer.code}`, answer.message);
    }
    this.note('temporary', answer.message);
    throw new CarrierUnavailableError(`${this.name} refused for now: ${answer.message}`);
  }

  health(): CarrierHealth {
    return { carrier: this.name, state: 'ready', errors: { ...this.errors }, lastError: this.lastError };
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.client.close();
  }

  private context(): SendContext {
    return { callbackUrl: this.callbackUrl, now: this.clock.now() };
  }

  private note(kind: ErrorKind, reason: string): void {
    this.errors[kind] += 1;
    this.lastError = reason.slice(0, 500);
  }
}
