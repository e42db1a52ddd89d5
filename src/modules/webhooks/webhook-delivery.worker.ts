import { Worker } from 'bullmq';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { type WebhookDeliveryJob, webhookDeliveryQueue } from '../../jobs/webhook-delivery.job.js';
import type { WorkerContext } from '../../jobs/workers.js';

/**
 * Makes webhook attempts, WEBHOOK_CONCURRENCY at once per process: each job is one attempt,
 * and schedules the next itself when one is due (see WebhookDeliveries).
 */
export function createWebhookDeliveryWorker({ deps, services }: WorkerContext): Worker<WebhookDeliveryJob> {
  const connection = createWorkerConnection(deps.config.redisUrl);
  const worker = new Worker<WebhookDeliveryJob>(
    webhookDeliveryQueue.name,
    (job) => services.webhookDeliveries.attempt(job.data),
    {
      connection,
      prefix: deps.config.redisPrefix,
      concurrency: deps.config.webhookConcurrency,
    },
  );
  // The delivery stays pending in PostgreSQL; the recovery sweep gives it a job again.
  worker.on('failed', (job, error) =>
    deps.logger.warn({ delivery: job?.data.delivery, err: error }, 'webhook attempt could not be made'),
  );
  worker.on('closed', () => void connection.quit());
  return worker;
}
