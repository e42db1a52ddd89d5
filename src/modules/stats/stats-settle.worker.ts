import type { Worker } from 'bullmq';
import { createRecurringWorker } from '../../jobs/job-schedule.js';
import { STATS_SETTLE, type StatsSettleJob } from '../../jobs/stats-settle.job.js';
import type { WorkerContext } from '../../worker-context.js';
import type { StatsSettler } from './stats-settle.js';

/** Settles the statistics every quarter of an hour (and once as a worker starts). */
export function createStatsSettleWorker({
  deps,
  services,
}: WorkerContext<{ statsSettler: StatsSettler }>): Worker<StatsSettleJob> {
  return createRecurringWorker({
    queue: deps.queues.statsSettle,
    job: STATS_SETTLE,
    enabled: true,
    redis: deps.config.redis,
    prefix: deps.config.redisPrefix,
    logger: deps.logger,
    run: (cancelled) => services.statsSettler.settle(cancelled),
  });
}
