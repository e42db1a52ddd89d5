import { type Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { RedisTarget } from '../config.js';
import { FORGET_FINISHED_JOBS } from './queue-definition.js';
import { createWorkerConnection } from './redis-connections.js';

/** A job that runs on its own every so often, and what it is called in the logs. */
export interface RecurringJob {
  scheduler: string;
  everyMs: number;
  what: string;
}

/**
 * Schedules `job` on `queue` as a BullMQ job scheduler (however many worker processes upsert it,
 * there is one schedule, and each run is one job, taken by one of them), or removes the schedule
 * when it is not `enabled`. A failure is logged, for the next worker start to retry.
 */
async function scheduleRecurringJob(
  queue: Queue<Record<string, never>>,
  job: RecurringJob,
  enabled: boolean,
  logger: Logger,
): Promise<void> {
  try {
    if (enabled)
      await queue.upsertJobScheduler(
        job.scheduler,
        { every: job.everyMs },
        { name: job.scheduler, opts: FORGET_FINISHED_JOBS },
      );
    else await queue.removeJobScheduler(job.scheduler);
  } catch (error) {
    logger.warn({ err: error }, `${job.what} could not be scheduled; the next worker start tries again`);
  }
}

export interface RecurringWorkerOptions {
  queue: Queue<Record<string, never>>;
  job: RecurringJob;
  enabled: boolean;
  redis: RedisTarget;
  prefix: string;
  logger: Logger;
  /** One run; `cancelled` turns true once the worker is closing, for the run to stop between steps. */
  run: (cancelled: () => boolean) => Promise<unknown>;
}

/**
 * The worker of a recurring job, one run at a time per process, and its schedule (so it also runs
 * as a worker starts). A failed run is logged; the next one tries again.
 */
export function createRecurringWorker(options: RecurringWorkerOptions): Worker<Record<string, never>> {
  const { queue, job, enabled, prefix, logger, run } = options;
  const connection = createWorkerConnection(options.redis);
  let closing = false;
  const worker = new Worker<Record<string, never>>(
    queue.name,
    async () => {
      await run(() => closing);
    },
    { connection, prefix, concurrency: 1 },
  );
  const scheduled = scheduleRecurringJob(queue, job, enabled, logger);
  worker.on('closing', () => {
    closing = true;
  });
  worker.on('failed', (_job, error) =>
    logger.warn({ err: error }, `${job.what} failed; the next one tries again`),
  );
  worker.on('closed', () => void scheduled.finally(() => void connection.quit()));
  return worker;
}
