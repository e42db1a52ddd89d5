import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../../errors.js';
import { TAKE_LEASED_SLOT } from '../../lib/leased-slots.js';

// A slot is held by a lease that its process renews; a process that dies without releasing its
// slots (killed, or cut off from Redis) gives them back when their leases run out.
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

const RENEW = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 1, #ARGV do redis.call('ZADD', KEYS[1], 'XX', nowMs + ${LEASE_MS}, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ${LEASE_MS})
return 1`;

export interface SubscriptionSlotsOptions {
  redis: Redis;
  prefix: string;
  max: number;
  logger: Logger;
}

/** At most `max` open subscriptions per account, counted in Redis over every process. */
export class SubscriptionSlots {
  /** This process's slots, by account: what it renews. */
  private readonly held = new Map<string, Set<string>>();
  private renewal: NodeJS.Timeout | null = null;
  private readonly redis: Redis;
  private readonly prefix: string;
  readonly max: number;
  private readonly logger: Logger;

  constructor(options: SubscriptionSlotsOptions) {
    ({ redis: this.redis, prefix: this.prefix, max: this.max, logger: this.logger } = options);
  }

  /**
   * A slot's release, or null when the account already holds `max`. Without Redis no slot can be
   * counted (nor an update received): ServiceUnavailableError.
   */
  async acquire(accountId: string): Promise<(() => void) | null> {
    const slot = randomUUID();
    let taken: unknown;
    try {
      taken = await this.redis.eval(TAKE_LEASED_SLOT, 1, this.key(accountId), this.max, LEASE_MS, slot);
    } catch (error) {
      this.logger.warn({ err: error, account: accountId }, 'subscription refused: Redis unavailable');
      throw new ServiceUnavailableError(
        'Live updates are unavailable (Redis cannot be reached); try again in a few seconds',
      );
    }
    if (taken !== 1) return null;
    const slots = this.held.get(accountId) ?? new Set<string>();
    this.held.set(accountId, slots.add(slot));
    this.renewal ??= setInterval(() => this.renew(), RENEW_EVERY_MS).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      slots.delete(slot);
      if (slots.size === 0) this.held.delete(accountId);
      this.redis.zrem(this.key(accountId), slot).catch((error: unknown) => {
        this.logger.warn(
          { err: error, account: accountId },
          'subscription slot not released; its lease ends it',
        );
      });
    };
  }

  stop(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
  }

  private renew(): void {
    for (const [accountId, slots] of this.held) {
      this.redis.eval(RENEW, 1, this.key(accountId), ...slots).catch((error: unknown) => {
        this.logger.warn({ err: error, account: accountId }, 'subscription leases not renewed');
      });
    }
  }

  private key(accountId: string): string {
    return `${this.prefix}:live:slots:${accountId}`;
  }
}
