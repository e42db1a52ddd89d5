import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * What the live updates of one account may cost per second, over every API process: each update a
 * stream delivers costs what its selection can cost at most (src/graphql/query-cost.ts, at most
 * MAX_UPDATE_COST), which follows the work of running it: fields resolved, lists read, the event
 * written. So however many events an account's sends and campaigns make, its streams take a few
 * tens of milliseconds of CPU a second from the other tenants (3 to 30 µs a unit, by selection,
 * measured on a loaded two-core machine).
 */
export const LIVE_COST_PER_SECOND = 2_000;

/**
 * The account's budget of live updates, counted in Redis by one atomic script per update (a fixed
 * window of one second). Past it, updates wait for a later second rather than being dropped: a
 * stream delivers at the pace the budget allows, and one that falls too far behind ends
 * (MAX_UNREAD_UPDATES, live-subscriptions.ts).
 */
export class LiveBudget {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:live:budget`,
      points: LIVE_COST_PER_SECOND,
      duration: 1,
    });
  }

  /**
   * Resolves true once `cost` is charged to the account, false if `signal` aborts first.
   * rate-limiter-flexible's own queue (RateLimiterQueue) cannot be left: a stream that ends while
   * it waits would still be charged later, hence this loop.
   */
  async charge(accountId: string, cost: number, signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        await this.limiter.consume(accountId, cost);
        return true;
      } catch (outcome) {
        if (!(outcome instanceof RateLimiterRes)) {
          // Redis is away, so no event can arrive either: what is already here is delivered uncounted.
          this.logger.warn(
            { err: outcome, account: accountId },
            'live update not counted: Redis unavailable',
          );
          return true;
        }
        // Spread over the next second: let go at its start together, the waiting updates would
        // run as one burst and hold up every other request of the process meanwhile.
        const spread = Math.floor(Math.random() * 1_000);
        await sleep(outcome.msBeforeNext + spread, undefined, { signal }).catch(() => undefined);
      }
    }
    return false;
  }
}
