import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { FORGET_FINISHED_JOBS } from './queue-definition.js';

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
export async function scheduleRecurringJob(
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
