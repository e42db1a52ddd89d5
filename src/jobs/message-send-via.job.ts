import { createHash } from 'node:crypto';
import type { DefaultJobOptions } from 'bullmq';
import { FORGET_FINISHED_JOBS } from './queue-definition.js';

/**
 * Messages a worker process forwarded to the processes that hold a carrier's binds, because it
 * holds none itself: `carriers` are the route's carriers still to try, the one forwarded to first.
 */
export interface MessageSendViaJob {
  messageIds: string[];
  carriers: string[];
}

/**
 * One queue per carrier, consumed only by the processes that hold one of its binds: a message
 * waits there for a process that can hand it to that carrier, not for a retry's backoff.
 */
export function messageSendViaQueueName(carrier: string): string {
  return `message-send-via-${carrier}`;
}

/** As the send queue's: a hand-over no carrier could take now is tried again later. */
export const MESSAGE_SEND_VIA_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
  ...FORGET_FINISHED_JOBS,
};

/**
 * Made of the messages' ids and the moment they were forwarded: the same forward added twice is
 * one job, while a message forwarded again later (a new claim) is not mistaken for a job still
 * running, which would leave it without one.
 */
export function sendViaJobId(messageIds: readonly string[], at: number): string {
  return `via-${createHash('sha256')
    .update(`${messageIds.join(',')}@${at}`)
    .digest('base64url')}`;
}
