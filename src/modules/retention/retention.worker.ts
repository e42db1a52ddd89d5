import type { Worker } from 'bullmq';
import { createRecurringWorker } from '../../jobs/job-schedule.js';
import { RETENTION_SWEEP, type RetentionJob } from '../../jobs/retention.job.js';
import type { WorkerContext } from '../../worker-context.js';
import type { RetentionSweep } from './retention-sweep.js';

/** Runs the retention sweep once an hour (and once as a worker starts). */
export function createRetentionWorker({
  deps,
  services,
}: WorkerContext<{ retentionSweep: RetentionSweep }>): Worker<RetentionJob> {
  return createRecurringWorker({
    queue: deps.queues.retention,
    job: RETENTION_SWEEP,
    enabled: services.retentionSweep.enabled,
    redis: deps.config.redis,
    prefix: deps.config.redisPrefix,
    logger: deps.logger,
    run: (cancelled) => services.retentionSweep.sweep(cancelled),
  });
}
