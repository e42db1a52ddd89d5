import { Worker } from 'bullmq';
import { scheduleRecurringJob } from '../../jobs/job-schedule.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { RETENTION_SWEEP, type RetentionJob, retentionQueue } from '../../jobs/retention.job.js';
import type { WorkerContext } from '../../worker-context.js';
import type { RetentionSweep } from './retention-sweep.js';

/** Runs the retention sweep once an hour (and once as a worker starts). */
export function createRetentionWorker({
  deps,
  services,
}: WorkerContext<{ retentionSweep: RetentionSweep }>): Worker<RetentionJob> {
  const connection = createWorkerConnection(deps.config.redis);
  let closing = false;
  const worker = new Worker<RetentionJob>(
    retentionQueue.name,
    async () => {
      await services.retentionSweep.sweep(() => closing);
    },
    { connection, prefix: deps.config.redisPrefix, concurrency: 1 },
  );
  const scheduled = scheduleRecurringJob(
    deps.queues.retention,
    RETENTION_SWEEP,
    services.retentionSweep.enabled,
    deps.logger,
  );
  worker.on('closing', () => {
    closing = true;
  });
  worker.on('failed', (_job, error) =>
    deps.logger.warn({ err: error }, 'retention sweep failed; the next one tries again'),
  );
  worker.on('closed', () => void scheduled.finally(() => void connection.quit()));
  return worker;
}
