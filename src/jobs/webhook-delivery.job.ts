import { FORGET_FINISHED_JOBS, JobProducer, type QueueDefinition } from './queue-definition.js';

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
export class WebhookDeliveryJobs extends JobProducer<WebhookDeliveryJob> {
  async enqueue(jobs: readonly WebhookDeliveryJob[], delayMs = 0): Promise<void> {
    await this.add(
      jobs.map((job) => ({
        name: 'deliver',
        data: job,
        opts: { jobId: `${job.delivery}-a${job.attempt}`, ...(delayMs > 0 ? { delay: delayMs } : {}) },
      })),
      'could not enqueue webhook deliveries; the recovery sweep will',
      { deliveries: jobs.length },
    );
  }
}
