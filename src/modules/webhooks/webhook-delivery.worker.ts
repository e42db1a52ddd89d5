import { Worker } from 'bullmq';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { type WebhookDeliveryJob, webhookDeliveryQueue } from '../../jobs/webhook-delivery.job.js';
import type { WorkerContext } from '../../worker-context.js';
import { DELIVERIES_PER_JOB, type WebhookDeliveries } from './webhook-deliveries.js';

/**
 * Makes webhook attempts, about WEBHOOK_CONCURRENCY at once per process: each job makes a few
 * attempts side by side, and schedules the next ones itself when they are due (see
 * WebhookDeliveries).
 */
export function createWebhookDeliveryWorker({
  deps,
  services,
}: WorkerContext<{ webhookDeliveries: WebhookDeliveries }>): Worker<WebhookDeliveryJob> {
  const connection = createWorkerConnection(deps.config.redis);
  const worker = new Worker<WebhookDeliveryJob>(
    webhookDeliveryQueue.name,
    (job) => services.webhookDeliveries.attempt(job.data),
    {
      connection,
      prefix: deps.config.redisPrefix,
      concurrency: Math.ceil(deps.config.webhookConcurrency / DELIVERIES_PER_JOB),
    },
  );
  // The delivery stays pending in PostgreSQL; the recovery sweep gives it a job again.
  worker.on('failed', (job, error) =>
    deps.logger.warn({ deliveries: job?.data.deliveries, err: error }, 'webhook attempt could not be made'),
  );
  worker.on('closed', () => void connection.quit());
  return worker;
}
