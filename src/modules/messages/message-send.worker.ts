import { Worker } from 'bullmq';
import { RateLimiterQueue, RateLimiterRedis } from 'rate-limiter-flexible';
import { type Carrier, CarrierRejectedError, CarrierUnavailableError } from '../../carriers/carrier.js';
import { type MessageSendJob, messageSendQueue } from '../../jobs/message-send.job.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import type { WorkerContext } from '../../jobs/workers.js';
import type { MessageDelivery } from './message-delivery.js';

type Outcome = 'done' | 'retry';

/**
 * Hands each queued message to the carrier exactly once: claim in PostgreSQL, carrier call,
 * record the carrier's id. A job carries a batch of messages, which go to the carrier side by
 * side and each on its own; a message found claimed or no longer queued is skipped, which makes
 * duplicate and retried jobs harmless. A job whose carrier was unreachable for some of its
 * messages is retried, and then finds the others done.
 */
export function createMessageSendWorker({ deps, services, carrier }: WorkerContext): Worker<MessageSendJob> {
  const { config, logger } = deps;
  const connection = createWorkerConnection(config.redis);
  // The carrier's pace is one budget for every worker process, counted in Redis.
  const pace = config.carrierMaxPerSecond
    ? new RateLimiterQueue(
        new RateLimiterRedis({
          storeClient: connection,
          keyPrefix: `${config.redisPrefix}:carrier-pace`,
          points: config.carrierMaxPerSecond,
          duration: 1,
        }),
      )
    : null;
  const sendOne = async (messageId: string): Promise<Outcome> => {
    if (pace) await pace.removeTokens(1, carrier.name);
    // Claimed just before its own carrier call, so a message waiting for the pace is not held.
    return handOver(services.messageDelivery, carrier, messageId, config.claimLeaseMs);
  };
  const worker = new Worker<MessageSendJob>(
    messageSendQueue.name,
    async (job) => {
      const outcomes = await Promise.allSettled(job.data.messageIds.map(sendOne));
      const failures = outcomes.filter((outcome) => outcome.status === 'rejected');
      if (failures.length > 0) throw failures[0]!.reason;
      const retries = outcomes.filter(
        (outcome) => outcome.status === 'fulfilled' && outcome.value === 'retry',
      ).length;
      if (retries > 0)
        throw new CarrierUnavailableError(
          `the carrier was unavailable for ${retries} of ${job.data.messageIds.length} messages`,
        );
    },
    {
      connection,
      prefix: config.redisPrefix,
      concurrency: config.sendConcurrency,
      // A job of a worker that died stays active until its lock lapses; BullMQ then hands it
      // to another worker, which may take the claims over once the same lease has passed.
      lockDuration: config.claimLeaseMs,
      stalledInterval: config.recoveryIntervalMs,
      // A busy event loop can miss a lock renewal; running the job again is harmless (the claims),
      // failing it for that is not.
      maxStalledCount: 10,
      autorun: true,
    },
  );
  worker.on('failed', (job, error) =>
    logger.warn({ messages: job?.data.messageIds.length, err: error }, 'send attempt failed'),
  );
  // BullMQ leaves a connection it was given open; this one is the worker's alone.
  worker.on('closed', () => void connection.quit());
  return worker;
}

async function handOver(
  delivery: MessageDelivery,
  carrier: Carrier,
  messageId: string,
  leaseMs: number,
): Promise<Outcome> {
  const message = await delivery.claimForSending(messageId, leaseMs);
  if (!message || (await delivery.failIfExpired(message))) return 'done';
  if (message.reclaimed && !carrier.deduplicatesByReference) {
    // The worker before us died inside the carrier call: sending again could send twice.
    await delivery.recordFailed(message, {
      code: 'unknown_outcome',
      message: 'The send was interrupted and the carrier cannot tell whether it took the message',
    });
    return 'done';
  }
  let carrierMessageId: string;
  try {
    ({ carrierMessageId } = await carrier.send({
      reference: message.id,
      to: message.to,
      text: message.text,
      encoding: message.encoding,
      segments: message.segments,
      from: message.sender,
      validUntil: message.expiresAt,
    }));
  } catch (error) {
    if (error instanceof CarrierRejectedError) {
      await delivery.recordFailed(message, { code: error.code, message: error.message });
      return 'done';
    }
    if (!(error instanceof CarrierUnavailableError)) throw error;
    await delivery.releaseClaim(message.id);
    return 'retry';
  }
  await delivery.recordSubmitted(message, carrier.name, carrierMessageId);
  return 'done';
}
