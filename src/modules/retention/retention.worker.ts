import { Queue, Worker } from 'bullmq';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import type { WorkerContext } from '../../jobs/workers.js';

export const RETENTION_QUEUE = 'retention';
const SWEEP_SCHEDULER = 'retention-sweep';
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Runs the retention sweep once an hour (and once as a worker starts), as a BullMQ job
 * scheduler: however many worker processes upsert it, there is one schedule and each run is
 * one job, taken by one of them.
 */
export function createRetentionWorker({ deps, services }: WorkerContext): Worker {
  const connection = createWorkerConnection(deps.config.redisUrl);
  let closing = false;
  const worker = new Worker(
    RETENTION_QUEUE,
    async () => {
      await services.retention.sweep(() => closing);
    },
    { connection, prefix: deps.config.redisPrefix, concurrency: 1 },
  );
  const schedule = new Queue(RETENTION_QUEUE, { connection, prefix: deps.config.redisPrefix });
  const scheduled = services.retention.enabled
    ? schedule.upsertJobScheduler(SWEEP_SCHEDULER, { every: SWEEP_EVERY_MS }, { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: true } })
    : schedule.removeJobScheduler(SWEEP_SCHEDULER);
  scheduled.catch((error: unknown) => deps.logger.warn({ err: error }, 'retention sweep could not be scheduled; the next worker start tries again'));
  worker.on('closing', () => {
    closing = true;
  });
  worker.on('failed', (_job, error) => deps.logger.warn({ err: error }, 'retention sweep failed; the next one tries again'));
  worker.on('closed', () => {
    void scheduled
      .catch(() => undefined)
      .then(() => schedule.close())
      .finally(() => void connection.quit());
  });
  return worker;
}
