import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { FORGET_FINISHED_JOBS, type QueueDefinition } from './queue-definition.js';

/** One attempt of a pending webhook delivery (pending_webhook_deliveries.id). */
export interface WebhookDeliveryJob {
  delivery: string;
  attempt: number;
}

// Retries are not BullMQ's: each attempt is a job of its own, scheduled from the attempt count in PostgreSQL.
export const webhookDeliveryQueue: QueueDefinition<WebhookDeliveryJob> = {
  name: 'webhook-delivery',
  defaultJobOptions: { attempts: 1, ...FORGET_FINISHED_JOBS },
};

/** An attempt's job id is `<delivery>-a<n>`, so a stale copy of an attempt already made is the same job. */
export class WebhookDeliveryJobs {
  constructor(
    private readonly queue: Queue<WebhookDeliveryJob>,
    private readonly logger: Logger,
  ) {}

  /** Hands attempts to the queue; a failure is logged, not raised: the recovery sweep enqueues them later. */
  async enqueue(jobs: readonly WebhookDeliveryJob[], delayMs = 0): Promise<void> {
    if (jobs.length === 0) return;
    try {
      await this.queue.addBulk(
        jobs.map((job) => ({ name: 'deliver', data: job, opts: { jobId: `${job.delivery}-a${job.attempt}`, ...(delayMs > 0 ? { delay: delayMs } : {}) } })),
      );
    } catch (error) {
      this.logger.warn({ err: error, deliveries: jobs.length }, 'could not enqueue webhook deliveries; the recovery sweep will');
    }
  }
}
