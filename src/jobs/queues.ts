import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { campaignDispatchQueue } from './campaign-dispatch.job.js';
import { contactImportQueue } from './contact-import.job.js';
import { messageSendQueue } from './message-send.job.js';
import type { PayloadOf } from './queue-definition.js';
import { retentionQueue } from './retention.job.js';
import { statsSettleQueue } from './stats-settle.job.js';
import { webhookDeliveryQueue } from './webhook-delivery.job.js';

/** Every queue of the service, written once: the producers, the workers and shutdown derive from it. */
export const QUEUES = {
  messageSend: messageSendQueue,
  campaignDispatch: campaignDispatchQueue,
  webhookDelivery: webhookDeliveryQueue,
  contactImport: contactImportQueue,
  retention: retentionQueue,
  statsSettle: statsSettleQueue,
} as const;

export type QueueKey = keyof typeof QUEUES;

export type Queues = { readonly [Key in QueueKey]: Queue<PayloadOf<(typeof QUEUES)[Key]>> };

/**
 * The producers of every queue, on one fail-fast connection. Job ids are the ids of the rows
 * they work on, so that adding the same work twice (a retry, the recovery sweep) is a no-op.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const entries = Object.entries(QUEUES).map(([key, { name, defaultJobOptions }]) => [
    key,
    new Queue(name, { connection, prefix, defaultJobOptions }),
  ]);
  return Object.fromEntries(entries) as Queues;
}

export function queueList(queues: Queues): Queue[] {
  return Object.values(queues) as Queue[];
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(queueList(queues).map((queue) => queue.close()));
}
