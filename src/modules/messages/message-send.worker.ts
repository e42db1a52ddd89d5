import { Worker } from 'bullmq';
import { CarrierUnavailableError } from '../../carriers/carrier.js';
import type { CarrierPool, ResumedRoute } from '../../carriers/routing/carrier-pool.js';
import { type MessageSendJob, messageSendQueue } from '../../jobs/message-send.job.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import type { WorkerContext } from '../../worker-context.js';
import type { MessageDelivery } from './message-delivery.js';

type Outcome = 'done' | 'retry';

/**
 * Hands each queued message to a carrier exactly once (the carriers module chooses which): claim in PostgreSQL, carrier call,
 * record the carrier's id. A job carries a batch of messages, which go to the carrier side by
 * side and each on its own; a message found claimed or no longer queued is skipped, which makes
 * duplicate and retried jobs harmless. A job whose carrier was unreachable for some of its
 * messages is retried, and then finds the others done. Messages another process forwards to
 * this one (it holds the carrier's bind) go the same way, resuming their route where they left it.
 */
export function createMessageSendWorker({
  deps,
  services,
  carriers,
}: WorkerContext<{ messageDelivery: MessageDelivery }>): Worker<MessageSendJob> {
  const { config, logger } = deps;
  const connection = createWorkerConnection(config.redis);
  const sendAll = async (messageIds: string[], resumed: ResumedRoute | null) => {
    const outcomes = await Promise.allSettled(
      messageIds.map((id) => handOver(services.messageDelivery, carriers, id, config.claimLeaseMs, resumed)),
    );
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected');
    if (failures.length > 0) throw failures[0]!.reason;
    const retries = outcomes.filter(
      (outcome) => outcome.status === 'fulfilled' && outcome.value === 'retry',
    ).length;
    if (retries > 0)
      throw new CarrierUnavailableError(`no carrier could take ${retries} of ${messageIds.length} messages`);
  };
  carriers.consumeForwarded(sendAll);
  const worker = new Worker<MessageSendJob>(
    messageSendQueue.name,
    (job) => sendAll(job.data.messageIds, null),
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
  // A process that holds no carrier takes no send job: the processes that hold the binds do.
  carriers.onUsableChange((usable) => {
    if (usable) void worker.resume();
    else void worker.pause(true);
  });
  // BullMQ leaves a connection it was given open; this one is the worker's alone.
  worker.on('closed', () => void connection.quit());
  return worker;
}

const NO_ROUTE = { code: 'no_route', message: 'No route covers the number' };
const UNKNOWN_OUTCOME = {
  code: 'unknown_outcome',
  message: 'The send was interrupted and the carrier cannot tell whether it took the message',
};

async function handOver(
  delivery: MessageDelivery,
  carriers: CarrierPool,
  messageId: string,
  leaseMs: number,
  resumed: ResumedRoute | null,
): Promise<Outcome> {
  const message = await delivery.claimForSending(messageId, leaseMs);
  if (
    !message ||
    (await delivery.failIfExpired(message)) ||
    (await delivery.failIfNoCompliantSender(message))
  )
    return 'done';
  const routed = {
    reference: message.id,
    to: message.to,
    text: message.text,
    encoding: message.encoding,
    segments: message.segments,
    from: message.sender,
    validUntil: message.expiresAt,
    accountId: message.accountId,
    pinned: message.pinnedCarrier,
  };
  // The worker before us died inside the carrier call: sending again could send twice.
  if (message.reclaimed && !carriers.deduplicates(routed)) {
    await delivery.recordFailed(message, UNKNOWN_OUTCOME);
    return 'done';
  }
  const result = await carriers.handOver(routed, resumed);
  switch (result.outcome) {
    case 'sent':
      await delivery.recordSubmitted(message, result.carrier, result.carrierMessageId);
      return 'done';
    case 'rejected':
      await delivery.recordFailed(message, { code: result.code, message: result.message });
      return 'done';
    case 'no_route':
      await delivery.recordFailed(message, NO_ROUTE);
      return 'done';
    case 'forwarded':
      // Given back first: the process it goes to claims it as any worker would.
      await delivery.releaseClaim(message.id);
      await result.forward();
      return 'done';
    case 'unavailable':
      await delivery.releaseClaim(message.id, result.pinnedTo);
      return 'retry';
  }
}
