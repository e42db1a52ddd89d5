import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import type { CarrierEventSink } from '../carrier.js';
import { CallbackEvents } from './callback-events.js';
import { type HttpCarrierRecord, providerOf } from './http-carriers.js';

/** A call to /carriers/{name}/events… as it reached Tern. */
export interface CarrierCallbackCall {
  /** The path and query as requested. */
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

export interface CarrierCallbacksOptions {
  prisma: PrismaClient;
  clock: Clock;
  logger: Logger;
  /** PUBLIC_URL: a provider signs the URL it called, which is this and the path. */
  publicUrl: string | null;
  /** The carrier's record, or null when no carrier has that name. */
  carrier(name: string): Promise<HttpCarrierRecord | null>;
  sinkFor(carrier: string): CarrierEventSink;
}

/**
 * Reports and replies HTTP providers call back with (POST /carriers/{name}/events): verified the
 * provider's way, stored in PostgreSQL, then applied. An unverified call changes nothing.
 */
export class CarrierCallbacks {
  private readonly events: CallbackEvents;
  // Made once per record: the directory gives the same record until the carrier's row is read again.
  private readonly providers = new WeakMap<HttpCarrierRecord, ReturnType<typeof providerOf>>();

  constructor(private readonly options: CarrierCallbacksOptions) {
    this.events = new CallbackEvents(options.prisma, options.clock);
  }

  /**
   * 'accepted' once the call's events are stored (applied too, unless one names a message the
   * send of which is not recorded yet: the carrier's loop applies it then); 'refused' when the
   * call is not verified as coming from the carrier's provider (or names no HTTP carrier).
   */
  async receive(name: string, call: CarrierCallbackCall): Promise<'accepted' | 'refused'> {
    const { publicUrl, logger } = this.options;
    const record = await this.options.carrier(name);
    const made = record ? this.providerOf(record) : null;
    if (!made || !publicUrl) return 'refused';
    const now = this.options.clock.now();
    const callback = {
      url: `${publicUrl}${call.path}`,
      method: call.method,
      headers: call.headers,
      rawBody: call.rawBody,
    };
    if (!made.provider.verify(callback, now)) {
      logger.warn({ carrier: name }, 'carrier callback not verified; refused');
      return 'refused';
    }
    const events = made.provider.events(callback, now);
    if (events.length === 0) return 'accepted';
    await this.events.receive(name, this.options.sinkFor(name), events);
    return 'accepted';
  }

  private providerOf(record: HttpCarrierRecord): ReturnType<typeof providerOf> {
    if (!this.providers.has(record)) this.providers.set(record, providerOf(record));
    return this.providers.get(record)!;
  }
}
