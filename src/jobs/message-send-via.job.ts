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
 * Made of the messages' ids, as a send job's: while the recovery sweep enqueues a message that
 * waits in a busy holder's queue again (it is unclaimed there), forwarding it again adds nothing
 * new. A forward that meets the same job still running (which found the message claimed by the
 * forwarding process) is dropped with it; the message, queued and unclaimed, is the sweep's.
 */
export function sendViaJobId(messageIds: readonly string[]): string {
  return `via-${createHash('sha256').update(messageIds.join(',')).digest('base64url')}`;
}
