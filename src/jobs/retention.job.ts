import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { FORGET_FINISHED_JOBS, type QueueDefinition } from './queue-definition.js';

/** A retention sweep needs nothing: each run deletes what is past RETENTION_DAYS. */
export type RetentionJob = Record<string, never>;

export const retentionQueue: QueueDefinition<RetentionJob> = {
  name: 'retention',
  defaultJobOptions: FORGET_FINISHED_JOBS,
};

const SWEEP_SCHEDULER = 'retention-sweep';
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * The hourly sweep as a BullMQ job scheduler: however many worker processes upsert it, there is
 * one schedule, and each run is one job, taken by one of them.
 */
export class RetentionJobs {
  constructor(
    private readonly queue: Queue<RetentionJob>,
    private readonly logger: Logger,
  ) {}

  /** Schedules the sweep, or removes the schedule when retention is off; a failure is logged, for the next worker start to retry. */
  async schedule(enabled: boolean): Promise<void> {
    try {
      if (enabled)
        await this.queue.upsertJobScheduler(
          SWEEP_SCHEDULER,
          { every: SWEEP_EVERY_MS },
          { name: 'sweep', opts: FORGET_FINISHED_JOBS },
        );
      else await this.queue.removeJobScheduler(SWEEP_SCHEDULER);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'retention sweep could not be scheduled; the next worker start tries again',
      );
    }
  }
}
