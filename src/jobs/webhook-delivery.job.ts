import { FORGET_FINISHED_JOBS, JobProducer, type QueueDefinition } from './queue-definition.js';

/**
 * The n-th attempt of a few pending webhook deliveries (pending_webhook_deliveries.id), all to
 * one destination, made together: a job and its Redis round trips cost as much for one callback
 * as for several.
 */
export interface WebhookDeliveryJob {
  deliveries: string[];
  attempt: number;
}

// Retries are not BullMQ's: each attempt is a job of its own, scheduled from the attempt count in PostgreSQL.
export const webhookDeliveryQueue: QueueDefinition<WebhookDeliveryJob> = {
  name: 'webhook-delivery',
  defaultJobOptions: { attempts: 1, ...FORGET_FINISHED_JOBS },
};

/**
 * A job's id is `<first delivery>-a<n>-<count>`, so a stale copy of the same job is the same job.
 * Copies that differ (a recovered delivery whose first job is still waiting) are harmless: an
 * attempt is claimed in PostgreSQL before it is made.
 */
export class WebhookDeliveryJobs extends JobProducer<WebhookDeliveryJob> {
  async enqueue(jobs: readonly WebhookDeliveryJob[], delayMs = 0): Promise<void> {
    await this.add(
      jobs.map((job) => ({
        name: 'deliver',
        data: job,
        opts: {
          jobId: `${job.deliveries[0]}-a${job.attempt}-${job.deliveries.length}`,
          ...(delayMs > 0 ? { delay: delayMs } : {}),
        },
      })),
      'could not enqueue webhook deliveries; the recovery sweep will',
      { deliveries: jobs.reduce((sum, job) => sum + job.deliveries.length, 0) },
    );
  }
}
