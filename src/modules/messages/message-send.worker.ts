import { Worker } from 'bullmq';
import { CarrierRejectedError, CarrierUnavailableError } from '../../carriers/carrier.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { QUEUE_NAMES, type MessageSendJob } from '../../jobs/queues.js';
import type { WorkerContext } from '../../jobs/workers.js';

/**
 * Hands each queued message to the carrier exactly once: claim in PostgreSQL, carrier call,
 * record the carrier's id. A job that finds the message claimed or no longer queued does
 * nothing, which makes duplicate and retried jobs harmless.
 */
export function createMessageSendWorker({ deps, services, carrier }: WorkerContext): Worker<MessageSendJob> {
  const { config, logger } = deps;
  const connection = createWorkerConnection(config.redisUrl);
  const worker = new Worker<MessageSendJob>(
    QUEUE_NAMES.messageSend,
    async (job) => {
      const message = await services.messages.claimForSending(job.data.messageId, config.claimLeaseMs);
      if (!message) return;
      if (message.reclaimed && !carrier.deduplicatesByReference) {
        // The worker before us died inside the carrier call: sending again could send twice.
        await services.messages.recordFailed(message.id, {
          code: 'unknown_outcome',
          message: 'The send was interrupted and the carrier cannot tell whether it took the message',
        });
        return;
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
        }));
      } catch (error) {
        if (error instanceof CarrierRejectedError) {
          await services.messages.recordFailed(message.id, { code: error.code, message: error.message });
          return;
        }
        if (error instanceof CarrierUnavailableError) await services.messages.releaseClaim(message.id);
        throw error;
      }
      await services.messages.recordSubmitted(message.id, carrier.name, carrierMessageId);
    },
    {
      connection,
      prefix: config.redisPrefix,
      concurrency: config.sendConcurrency,
      // A job of a worker that died stays active until its lock lapses; BullMQ then hands it
      // to another worker, which may take the claim over once the same lease has passed.
      lockDuration: config.claimLeaseMs,
      stalledInterval: config.recoveryIntervalMs,
      // A busy event loop can miss a lock renewal; running the job again is harmless (the claim,
      // the batch's lock), failing it for that is not.
      maxStalledCount: 10,
      ...(config.carrierMaxPerSecond ? { limiter: { max: config.carrierMaxPerSecond, duration: 1_000 } } : {}),
      autorun: true,
    },
  );
  worker.on('failed', (job, error) => logger.warn({ message: job?.data.messageId, err: error }, 'send attempt failed'));
  // BullMQ leaves a connection it was given open; this one is the worker's alone.
  worker.on('closed', () => void connection.quit());
  return worker;
}
