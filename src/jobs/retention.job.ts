import type { RecurringJob } from './job-schedule.js';
import { FORGET_FINISHED_JOBS, type QueueDefinition } from './queue-definition.js';

/** A retention sweep needs nothing: each run deletes what is past RETENTION_DAYS. */
export type RetentionJob = Record<string, never>;

export const retentionQueue: QueueDefinition<RetentionJob> = {
  name: 'retention',
  defaultJobOptions: FORGET_FINISHED_JOBS,
};

export const RETENTION_SWEEP: RecurringJob = {
  scheduler: 'retention-sweep',
  everyMs: 60 * 60 * 1000,
  what: 'retention sweep',
};
