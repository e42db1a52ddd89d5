import type { Dependencies } from '../deps.js';
import { CarrierActivityReport } from '../modules/stats/carrier-activity.js';
import { DeliveryTimes } from '../modules/stats/delivery-times.js';
import { MessageStats } from '../modules/stats/message-stats.js';
import { StatsReads } from '../modules/stats/stats-reads.js';
import { StatsSettler } from '../modules/stats/stats-settle.js';
import type { ModuleLogger } from './service-kit.js';

/**
 * The accounts' statistics reads, all through one gate (src/modules/stats/stats-reads.ts), and
 * the operator's report of the carriers, which no account can ask for, and the settler that keeps
 * the reads of long ranges cheap.
 */
export function statsServices(
  { prisma, clock, config, redis, statsPool }: Dependencies,
  logger: ModuleLogger,
) {
  const reads = new StatsReads({
    pool: statsPool,
    redis,
    prefix: config.redisPrefix,
    limits: { ...config.statsReads, windowSeconds: config.rateLimitWindowSeconds },
    logger: logger('stats'),
  });
  return {
    messageStats: new MessageStats(prisma, clock, reads),
    deliveryTimes: new DeliveryTimes(prisma, clock, reads),
    carrierActivityReport: new CarrierActivityReport(prisma, clock),
    statsSettler: new StatsSettler(prisma, clock, logger('stats')),
  };
}
