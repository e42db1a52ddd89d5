import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export const QUEUE_NAMES = {
  messageSend: 'message-send',
  campaignDispatch: 'campaign-dispatch',
  webhookDelivery: 'webhook-delivery',
  contactImport: 'contact-import',
} as const;

/** Messages to hand to the carrier: up to SEND_JOB_SIZE, accepted or dispatched together. */
export interface MessageSendJob {
  messageIds: string[];
}

export const SEND_JOB_SIZE = 100;

/** `start`: a scheduled campaign's send_at has come; `dispatch`: send its next batch. */
export type CampaignDispatchJob = { kind: 'start'; campaignId: string; sendAt: string } | { kind: 'dispatch'; campaignId: string };

/** One attempt of a pending webhook delivery (pending_webhook_deliveries.id). */
export interface WebhookDeliveryJob {
  delivery: string;
  attempt: number;
}

/** An uploaded file to import (import_jobs.id, also the job id). */
export interface ContactImportJob {
  importJobId: string;
}

export interface Queues {
  messageSend: Queue<MessageSendJob>;
  campaignDispatch: Queue<CampaignDispatchJob>;
  webhookDelivery: Queue<WebhookDeliveryJob>;
  contactImport: Queue<ContactImportJob>;
  close(): Promise<void>;
}

/**
 * The producers of every queue, on one fail-fast connection. Job ids are the ids of the rows
 * they work on, so that adding the same work twice (a retry, the recovery sweep) is a no-op.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const messageSend = new Queue<MessageSendJob>(QUEUE_NAMES.messageSend, {
    connection,
    prefix,
    defaultJobOptions: {
      attempts: 8,
      backoff: { type: 'exponential', delay: 1_000 },
      // PostgreSQL holds the state; finished jobs only need to be gone so the same id can be re-added.
      removeOnComplete: true,
      removeOnFail: true,
    },
  });
  const campaignDispatch = new Queue<CampaignDispatchJob>(QUEUE_NAMES.campaignDispatch, {
    connection,
    prefix,
    defaultJobOptions: { attempts: 10, backoff: { type: 'exponential', delay: 1_000 }, removeOnComplete: true, removeOnFail: true },
  });
  // Retries are not BullMQ's: each attempt is a job of its own, scheduled from the attempt count in PostgreSQL.
  const webhookDelivery = new Queue<WebhookDeliveryJob>(QUEUE_NAMES.webhookDelivery, {
    connection,
    prefix,
    defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  });
  const contactImport = new Queue<ContactImportJob>(QUEUE_NAMES.contactImport, {
    connection,
    prefix,
    defaultJobOptions: { attempts: 3, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: true, removeOnFail: true },
  });
  return {
    messageSend,
    campaignDispatch,
    webhookDelivery,
    contactImport,
    close: async () => {
      await Promise.all([messageSend.close(), campaignDispatch.close(), webhookDelivery.close(), contactImport.close()]);
    },
  };
}
