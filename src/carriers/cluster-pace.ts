import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * A carrier's max_per_second as one budget for every process, counted in Redis per second: a
 * hand-over takes a point, waiting for the next second when the budget is spent, but not past
 * its deadline, when the carrier counts as unable to take the message now.
 */
export class ClusterPace {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    prefix: string,
    private readonly carrier: string,
    perSecond: number,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:carrier-pace:${perSecond}`,
      points: perSecond,
      duration: 1,
    });
  }

  /** True once a point is taken; false when none comes free before `deadline` (epoch ms). */
  async take(deadline: number): Promise<boolean> {
    for (;;) {
      try {
        await this.limiter.consume(this.carrier, 1);
        return true;
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        const wait = Math.max(5, error.msBeforeNext);
        if (Date.now() + wait > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
