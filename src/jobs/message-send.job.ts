import { createHash } from 'node:crypto';
import { FORGET_FINISHED_JOBS, JobProducer, type NewJob, type QueueDefinition } from './queue-definition.js';

/** Messages to hand to the carrier: up to SEND_JOB_SIZE, accepted or dispatched together. */
export interface MessageSendJob {
  messageIds: string[];
}

export const messageSendQueue: QueueDefinition<MessageSendJob> = {
  name: 'message-send',
  defaultJobOptions: { attempts: 8, backoff: { type: 'exponential', delay: 1_000 }, ...FORGET_FINISHED_JOBS },
};

// Per-job costs (Redis round trips, locks, events) stay small beside the messages' at this size.
export const SEND_JOB_SIZE = 100;

/** Made of the job's messages' ids, so that enqueueing the same batch again adds nothing. */
export function sendJobId(messageIds: readonly string[]): string {
  return messageIds.length === 1
    ? messageIds[0]!
    : `batch-${createHash('sha256').update(messageIds.join(',')).digest('base64url')}`;
}

export class MessageSendJobs extends JobProducer<MessageSendJob> {
  /** Hands messages to the send queue, SEND_JOB_SIZE to a job. */
  async enqueue(ids: readonly string[]): Promise<void> {
    const jobs: NewJob<MessageSendJob>[] = [];
    for (let start = 0; start < ids.length; start += SEND_JOB_SIZE) {
      const messageIds = ids.slice(start, start + SEND_JOB_SIZE);
      jobs.push({ name: 'send', data: { messageIds }, opts: { jobId: sendJobId(messageIds) } });
    }
    await this.add(jobs, 'could not enqueue messages; the recovery sweep will', { messages: ids.length });
  }
}
