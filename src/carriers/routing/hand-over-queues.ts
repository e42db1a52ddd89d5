import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { SEND_JOB_SIZE } from '../../jobs/message-send.job.js';
import {
  MESSAGE_SEND_VIA_JOB_OPTIONS,
  type MessageSendViaJob,
  messageSendViaQueueName,
  sendViaJobId,
} from '../../jobs/message-send-via.job.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import { Batcher } from '../../lib/batcher.js';

/** Where a forwarded message resumes its route: the carriers left to try, the one it was forwarded to first. */
export interface ResumedRoute {
  carriers: string[];
}

/**
 * What the send path does with forwarded messages: the same claim, hand-over and record as a send
 * job's, the route resumed where it was left (the send path passes it back without reading it).
 */
export type ForwardedHandler = (messageIds: string[], resumed: ResumedRoute) => Promise<void>;

interface Forward {
  carriers: string[];
  messageId: string;
}

export interface HandOverQueuesOptions {
  redis: Redis;
  config: Pick<Config, 'redis' | 'redisPrefix' | 'sendConcurrency' | 'claimLeaseMs' | 'recoveryIntervalMs'>;
  logger: Logger;
}

/**
 * The hand-over queues of the carriers that hold binds (`message-send-via-<carrier>`): a worker
 * process forwards there a message whose carrier it holds no bind of, and consumes the queue of
 * each carrier it does hold a bind of, from the moment it takes the bind to the moment it gives
 * it up. Forwards made together go in one round trip, up to a send job's size per job.
 */
export class HandOverQueues {
  private readonly queues = new Map<string, Queue<MessageSendViaJob>>();
  private readonly consumers = new Map<string, Worker<MessageSendViaJob>>();
  private readonly closing = new Set<Promise<void>>();
  private handler: ForwardedHandler | null = null;
  private readonly forwards = new Batcher<Forward, undefined>((items) => this.add(items), {
    maxBatch: 1_000,
    maxInFlight: 2,
  });

  constructor(private readonly options: HandOverQueuesOptions) {}

  /** Sets what consumes the forwarded messages; until then this process consumes none. */
  consumeWith(handler: ForwardedHandler): void {
    this.handler = handler;
  }

  /** Forwards a message (its claim given back) to the processes holding the first of `carriers`. */
  async forward(carriers: string[], messageId: string): Promise<void> {
    await this.forwards.add({ carriers, messageId });
  }

  /** The hand-over queues of these carriers, as every process sees them (for their depths). */
  queuesOf(carriers: readonly string[]): Queue[] {
    return carriers.map((carrier) => this.queueOf(carrier));
  }

  /** Consumes the queues of exactly these carriers: those this process holds a bind of. */
  keepConsuming(carriers: ReadonlySet<string>): void {
    if (!this.handler) return;
    for (const [carrier, consumer] of this.consumers)
      if (!carriers.has(carrier)) {
        this.consumers.delete(carrier);
        this.closeInBackground(consumer);
      }
    for (const carrier of carriers)
      if (!this.consumers.has(carrier)) this.consumers.set(carrier, this.consumer(carrier, this.handler));
  }

  async close(): Promise<void> {
    for (const consumer of this.consumers.values()) this.closeInBackground(consumer);
    this.consumers.clear();
    await Promise.all(this.closing);
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }

  private consumer(carrier: string, handler: ForwardedHandler): Worker<MessageSendViaJob> {
    const { config, logger } = this.options;
    const connection = createWorkerConnection(config.redis);
    const consumer = new Worker<MessageSendViaJob>(
      messageSendViaQueueName(carrier),
      (job) => handler(job.data.messageIds, { carriers: job.data.carriers }),
      {
        connection,
        prefix: config.redisPrefix,
        concurrency: config.sendConcurrency,
        // As the send queue's worker: the claims make a job run twice harmless.
        lockDuration: config.claimLeaseMs,
        stalledInterval: config.recoveryIntervalMs,
        maxStalledCount: 10,
      },
    );
    consumer.on('error', (error) => logger.error({ carrier, err: error }, 'hand-over queue worker error'));
    consumer.on('failed', (job, error) =>
      logger.warn({ carrier, messages: job?.data.messageIds.length, err: error }, 'forwarded send failed'),
    );
    consumer.on('closed', () => void connection.quit());
    return consumer;
  }

  /** A consumer of a bind given up finishes its running jobs without holding up the pool's round. */
  private closeInBackground(consumer: Worker<MessageSendViaJob>): void {
    const closed = consumer
      .close()
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'hand-over queue worker not closed'),
      )
      .finally(() => this.closing.delete(closed));
    this.closing.add(closed);
  }

  private async add(items: Forward[]): Promise<undefined[]> {
    const groups = new Map<string, Forward[]>();
    for (const item of items) {
      const key = item.carriers.join(',');
      groups.set(key, [...(groups.get(key) ?? []), item]);
    }
    await Promise.all([...groups.values()].map((group) => this.addGroup(group)));
    return items.map(() => undefined);
  }

  private async addGroup(group: Forward[]): Promise<void> {
    const carriers = group[0]!.carriers;
    const queue = this.queueOf(carriers[0]!);
    const jobs = [];
    for (let start = 0; start < group.length; start += SEND_JOB_SIZE) {
      const messageIds = group.slice(start, start + SEND_JOB_SIZE).map((item) => item.messageId);
      jobs.push({
        name: 'send-via',
        data: { messageIds, carriers },
        opts: { jobId: sendViaJobId(messageIds) },
      });
    }
    try {
      await queue.addBulk(jobs);
    } catch (error) {
      // The messages are queued and unclaimed in PostgreSQL: the recovery sweep enqueues them again.
      this.options.logger.warn({ err: error, messages: group.length }, 'could not forward messages');
    }
  }

  private queueOf(carrier: string): Queue<MessageSendViaJob> {
    let queue = this.queues.get(carrier);
    if (!queue) {
      const { redis, config, logger } = this.options;
      queue = new Queue<MessageSendViaJob>(messageSendViaQueueName(carrier), {
        connection: redis,
        prefix: config.redisPrefix,
        defaultJobOptions: MESSAGE_SEND_VIA_JOB_OPTIONS,
      });
      queue.on('error', (error) => logger.warn({ err: error, carrier }, 'hand-over queue error'));
      this.queues.set(carrier, queue);
    }
    return queue;
  }
}
