import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis } from 'rate-limiter-flexible';
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

/** What became of a call: 'refused' is a 401, 'over_budget' a 429 after that many milliseconds. */
export type CarrierCallbackOutcome =
  | { outcome: 'accepted' }
  | { outcome: 'refused' }
  | { outcome: 'over_budget'; retryAfterMs: number };

/** Refused (unverified) callbacks one address may make per minute. */
const REFUSED_PER_MINUTE = 60;

export interface CarrierCallbacksOptions {
  prisma: PrismaClient;
  clock: Clock;
  logger: Logger;
  /** PUBLIC_URL: a provider signs the URL it called, which is this and the path. */
  publicUrl: string | null;
  /** The process's copy of the carrier's record, if it has one. */
  knownCarrier(name: string): HttpCarrierRecord | null;
  /** The carrier's record read from PostgreSQL (one added since the copy was made), or null. */
  readCarrier(name: string): Promise<HttpCarrierRecord | null>;
  /** Where refused calls are counted per client address, cluster-wide. */
  redis: Redis;
  redisPrefix: string;
  sinkFor(carrier: string): CarrierEventSink;
}

/**
 * Reports and replies HTTP providers call back with (POST /carriers/{name}/events): verified the
 * provider's way, stored in PostgreSQL, then applied. An unverified call changes nothing.
 *
 * A call is verified before its address's refusals are looked at: a provider's callbacks may come
 * from the addresses someone's forgeries come from (any Twilio customer can point a callback at
 * this URL), and a forger must not be able to get them refused. Verifying is an HMAC in memory,
 * cheaper than reading the budget. Only a call naming a carrier this process does not know, which
 * costs a PostgreSQL read to look at, reads the budget first. Past the budget, refused calls are
 * answered 429 without a log line each.
 */
export class CarrierCallbacks {
  private readonly events: CallbackEvents;
  private readonly refusals: RateLimiterRedis;
  // Made once per record: the directory gives the same record until the carrier's row is read again.
  private readonly providers = new WeakMap<HttpCarrierRecord, ReturnType<typeof providerOf>>();

  constructor(private readonly options: CarrierCallbacksOptions) {
    this.events = new CallbackEvents(options.prisma, options.clock);
    this.refusals = new RateLimiterRedis({
      storeClient: options.redis,
      keyPrefix: `${options.redisPrefix}:callback-refusals`,
      points: REFUSED_PER_MINUTE,
      duration: 60,
    });
  }

  /**
   * 'accepted' once the call's events are stored (applied too, unless one names a message the
   * send of which is not recorded yet: the carrier's loop applies it then); 'refused' when the
   * call is not verified as coming from the carrier's provider (or names no HTTP carrier), and
   * 'over_budget' instead once its address made more refused calls this minute than it may.
   */
  async receive(name: string, call: CarrierCallbackCall, address: string): Promise<CarrierCallbackOutcome> {
    const { publicUrl } = this.options;
    let record = this.options.knownCarrier(name);
    if (!record) {
      const spent = await this.refusals.get(address);
      if (spent && spent.consumedPoints >= REFUSED_PER_MINUTE)
        return { outcome: 'over_budget', retryAfterMs: spent.msBeforeNext };
      record = await this.options.readCarrier(name);
    }
    const made = record ? this.providerOf(record) : null;
    const now = this.options.clock.now();
    const callback = {
      url: `${publicUrl}${call.path}`,
      method: call.method,
      headers: call.headers,
      rawBody: call.rawBody,
    };
    if (!made || !publicUrl || !made.provider.verify(callback, now)) return this.refuse(name, address);
    const events = made.provider.events(callback, now);
    if (events.length > 0) await this.events.receive(name, this.options.sinkFor(name), events);
    return { outcome: 'accepted' };
  }

  private async refuse(name: string, address: string): Promise<CarrierCallbackOutcome> {
    const spent = await this.refusals.penalty(address, 1);
    if (spent.consumedPoints > REFUSED_PER_MINUTE)
      return { outcome: 'over_budget', retryAfterMs: spent.msBeforeNext };
    this.options.logger.warn({ carrier: name }, 'carrier callback not verified; refused');
    return { outcome: 'refused' };
  }

  private providerOf(record: HttpCarrierRecord): ReturnType<typeof providerOf> {
    if (!this.providers.has(record)) this.providers.set(record, providerOf(record));
    return this.providers.get(record)!;
  }
}
