import type { RecurringJob } from './job-schedule.js';
import { FORGET_FINISHED_JOBS, type QueueDefinition } from './queue-definition.js';

/** A settle of the statistics needs nothing: each run moves what has become old enough. */
export type StatsSettleJob = Record<string, never>;

export const statsSettleQueue: QueueDefinition<StatsSettleJob> = {
  name: 'stats-settle',
  defaultJobOptions: FORGET_FINISHED_JOBS,
};

// A quarter-hour settles within this of turning SETTLE_AFTER_MS old.
export const STATS_SETTLE: RecurringJob = {
  scheduler: 'stats-settle',
  everyMs: 15 * 60 * 1000,
  what: 'statistics settle',
};
