import { Worker } from 'bullmq';
import { scheduleRecurringJob } from '../../jobs/job-schedule.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { STATS_SETTLE, type StatsSettleJob, statsSettleQueue } from '../../jobs/stats-settle.job.js';
import type { WorkerContext } from '../../worker-context.js';
import type { StatsSettler } from './stats-settle.js';

/** Settles the statistics every quarter of an hour (and once as a worker starts). */
export function createStatsSettleWorker({
  deps,
  services,
}: WorkerContext<{ statsSettler: StatsSettler }>): Worker<StatsSettleJob> {
  const connection = createWorkerConnection(deps.config.redis);
  let closing = false;
  const worker = new Worker<StatsSettleJob>(
    statsSettleQueue.name,
    async () => {
      await services.statsSettler.settle(() => closing);
    },
    { connection, prefix: deps.config.redisPrefix, concurrency: 1 },
  );
  const scheduled = scheduleRecurringJob(deps.queues.statsSettle, STATS_SETTLE, true, deps.logger);
  worker.on('closing', () => {
    closing = true;
  });
  worker.on('failed', (_job, error) =>
    deps.logger.warn({ err: error }, 'statistics settle failed; the next one tries again'),
  );
  worker.on('closed', () => void scheduled.finally(() => void connection.quit()));
  return worker;
}
